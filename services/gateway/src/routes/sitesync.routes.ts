/**
 * Site sync (docs/api-notes.md, "Site sync"; docs/sitesync.md): which site holds which
 * representation. Records keeps the sites and states and serves them over SiteSyncService; the
 * gateway refuses roles before the body is read and validates strictly. Sites: Admin; requests,
 * changes, claims and reports: every role but Viewer; reads: everyone signed in.
 */
import { sitesyncPolicy } from '@reelbase/lib-platform';
import { defineRoute, type AnyRoute } from '../http/route.js';
import {
  claimedStatesJson,
  claimStatesRequest,
  listStatesRequest,
  putSiteRequest,
  reportStateRequest,
  requestSyncJson,
  requestSyncRequest,
  siteJson,
  stateJson,
  statePageJson,
  summaryJson,
  updateStateRequest,
} from '../mappers/sitesync.mapper.js';
import {
  ClaimBody,
  ClaimOut,
  ReportBody,
  SiteList,
  SiteOut,
  SitePath,
  SitePut,
  StateOut,
  StatePage,
  StatePatch,
  StatePath,
  StatesQuery,
  SummaryOut,
  SummaryQuery,
  SyncRequestBody,
  SyncRequestOut,
} from '../schemas/sitesync.schema.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN, NOT_VIEWER } from './route.roles.js';

const TAGS = ['sitesync'];

/** Sites: Admins. */
const SITE_ADMIN = { roles: ADMIN, to: 'change sync sites' };
/** Requests, changes, claims and reports: every role but Viewer (reads are open to all). */
const WRITER = { roles: NOT_VIEWER, to: 'change site sync states' };

export function siteSyncRoutes({ peers }: RouteDeps): AnyRoute[] {
  const sitesync = () => peers.sitesync;
  return [
    defineRoute({
      method: 'put',
      path: '/sitesync/sites/{code}',
      operationId: 'putSyncSite',
      summary: 'Create or replace a sync site (Admin).',
      description:
        'A place that holds files: `studio`, `remote` or `cloud`, with an optional `root` for the agents. The same body again ' +
        'changes nothing (no event); a change writes a `SiteSync` event with the site as `changes`.',
      tags: TAGS,
      auth: 'bearer',
      allow: SITE_ADMIN,
      params: SitePath,
      body: SitePut,
      responses: { 200: { description: 'The site.', schema: SiteOut } },
      errors: [503],
      handler: async ({ params, body, ctx }) => {
        const out = await sitesync().putSite(putSiteRequest(params.code, body), ctx);
        return siteJson(out.site!);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sitesync/sites',
      operationId: 'listSyncSites',
      summary: 'Every sync site, by code.',
      tags: TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'The sites.', schema: SiteList } },
      errors: [503],
      handler: async ({ ctx }) => ({ items: (await sitesync().listSites({}, ctx)).sites.map(siteJson) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/sitesync/sites/{code}',
      operationId: 'deleteSyncSite',
      summary: 'Delete a sync site no state names (Admin).',
      description: 'Unknown: 404. While states name the site (any status, `removed` included): 409 `code_in_use` with `usage`, the number of states.',
      tags: TAGS,
      auth: 'bearer',
      allow: SITE_ADMIN,
      params: SitePath,
      responses: { 200: { description: 'The deleted site.', schema: SiteOut } },
      errors: [404, 409, 503],
      handler: async ({ params, ctx }) => siteJson((await sitesync().deleteSite({ code: params.code }, ctx)).site!),
    }),
    defineRoute({
      method: 'post',
      path: '/sitesync/requests',
      // Each representation named is a state written: ten count as one request.
      cost: (body) => Math.ceil(body.representation_ids.length / 10),
      operationId: 'requestSiteSync',
      summary: 'Ask for representations on a site (every role but Viewer).',
      description:
        'Queues each representation that has no state on the site, or whose state is `failed`, `paused` or `removed` (fresh ' +
        'attempts, this priority); states already `queued`, `in_progress` or `synced` are left as they are. Ids that name no live ' +
        'Representation (or one in a project the caller may not read, answered the same) and an unknown site are 422 (one ' +
        'problem per id, `loc` `["body","representation_ids",i]`), and nothing is queued. Each queued state writes a `SiteSync` ' +
        'event (`create` for a new state).',
      tags: TAGS,
      auth: 'bearer',
      allow: WRITER,
      body: SyncRequestBody,
      responses: { 200: { description: 'How many were queued and left unchanged.', schema: SyncRequestOut } },
      errors: [503],
      handler: async ({ body, ctx }) => requestSyncJson(await sitesync().requestSync(requestSyncRequest(body), ctx)),
    }),
    defineRoute({
      method: 'get',
      path: '/sitesync/state',
      operationId: 'listSyncStates',
      summary: 'Sync states, filtered and paged.',
      description:
        'In (representation_id, site) order with a keyset cursor: pages stay stable while states are added. States of projects ' +
        'the caller may not read are left out.',
      tags: TAGS,
      auth: 'bearer',
      query: StatesQuery,
      responses: { 200: { description: 'A page of states.', schema: StatePage } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        return statePageJson(await sitesync().listStates(listStatesRequest(query), ctx));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sitesync/summary',
      operationId: 'summarizeSyncStates',
      summary: 'Sync states per status, for a project and/or a site.',
      description: 'States of projects the caller may not read are not counted.',
      tags: TAGS,
      auth: 'bearer',
      query: SummaryQuery,
      responses: { 200: { description: 'Counts by status.', schema: SummaryOut } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        return summaryJson(await sitesync().summarizeStates({ projectId: query.project_id, site: query.site }, ctx));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sitesync/claim',
      // The answer holds leases: never stored, so never replayed.
      replayable: false,
      operationId: 'claimSyncStates',
      summary: 'An agent claims due states of its site (every role but Viewer; typically an API key).',
      description:
        'Up to `limit` states of the site, highest `priority` first, then the longest waiting: `queued` ones and `in_progress` ' +
        `ones whose lease ran out (their lost attempt is counted first; at the ${sitesyncPolicy.MAX_ATTEMPTS}th they are \`failed\` instead). Each is now ` +
        '`in_progress` under a fresh `lease`, given to this claim only, however many agents claim at once. Nothing due: ' +
        '`{"items": []}`. An unknown site: 422. Each claimed state writes a `SiteSync` event. Only states of representations in ' +
        'projects the caller may read are handed out (docs/api-notes.md, "Restricted projects").',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: WRITER,
      body: ClaimBody,
      responses: { 200: { description: 'The claimed states, each with its lease.', schema: ClaimOut } },
      errors: [503],
      handler: async ({ body, ctx }) => {
        return claimedStatesJson(await sitesync().claimStates(claimStatesRequest(body), ctx));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sitesync/state/{representation_id}/{site}',
      operationId: 'reportSyncState',
      summary: 'An agent reports on a state it holds (every role but Viewer).',
      description:
        "`in_progress` records `progress` (0..1), `size` and `total_size` and extends the lease by the claim's `lease_seconds` " +
        `(no event); \`synced\` finishes the state; \`failed\` counts an attempt and queues it again (the ${sitesyncPolicy.MAX_ATTEMPTS}th leaves it \`failed\`), ` +
        "keeping `error`. A `lease` that is not the state's current one (another claim holds it, it ran out, or a PATCH ended " +
        'it): 409 `lease_lost`. No state for the representation on the site, or one in a project the caller may not read: 404.',
      tags: TAGS,
      auth: 'bearer',
      agent: true,
      allow: WRITER,
      params: StatePath,
      body: ReportBody,
      responses: { 200: { description: 'The state.', schema: StateOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        return stateJson((await sitesync().reportState(reportStateRequest(params, body), ctx)).state!);
      },
    }),
    defineRoute({
      method: 'patch',
      path: '/sitesync/state/{representation_id}/{site}',
      operationId: 'updateSyncState',
      summary: 'Pause, queue again or remove a state (every role but Viewer).',
      description:
        'Ends a held lease (its agent gets `lease_lost`). `queued` from any other status starts over with fresh attempts; ' +
        '`removed` from any status; `paused` only from `queued` or `in_progress` (otherwise 409 `transition_not_allowed`). ' +
        '`priority` changes the claim order. The same status and priority again change nothing. No state, or one in a project ' +
        'the caller may not read: 404.',
      tags: TAGS,
      auth: 'bearer',
      allow: WRITER,
      params: StatePath,
      body: StatePatch,
      responses: { 200: { description: 'The state.', schema: StateOut } },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx }) => {
        return stateJson((await sitesync().updateState(updateStateRequest(params, body), ctx)).state!);
      },
    }),
  ];
}
