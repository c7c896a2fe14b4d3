/**
 * Sync with another tracker (docs/api-notes.md, "Sync"; docs/architecture.md, "Sync"): imports and
 * mappings are records' SyncService; the changes feed is composed here from a page of the event log
 * and one SyncService call that answers, for those events, the records now, their external ids and
 * which writes were a source's own imports. Importing is for Admins; the reads for every role (they
 * show what `GET /events` and record reads show already).
 */
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { changeInfos, changeJson, changesRequest } from '../mappers/sync.mapper.js';
import { SyncChangeList, SyncChangesQuery, SyncImportBody, SyncImportOut, SyncMappingList, SyncMappingsQuery } from '../schemas/sync.schema.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN } from './route.roles.js';
import { PROJECT } from '../domain/project.access.js';

const TAGS = ['sync'];

/** Pages of the log one changes request reads at most while it looks for `limit` changes to show. */
const CHANGES_MAX_PAGES = 5;

export function syncRoutes({ peers, userChanged, access }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/sync/import',
      // A dry run writes nothing, so its answer is not stored; an import counts its items in the rate limit.
      replayable: (body) => body.dry_run !== true,
      cost: (body) => body.items.length,
      operationId: 'syncImport',
      summary: 'Import a batch from another tracker (Admin): upsert by source, entity type and external id.',
      description:
        'Each item is created, or merged into the record mapped to its `(source, entity_type, external_id)` as a PATCH is, and checked ' +
        'exactly as a create or PATCH is (schema, links, transitions, write rules). Links may name their target by `{"type","external_id"}`: ' +
        'another item of the batch (any order) or a record imported earlier from the same source. The batch is one transaction: any ' +
        'problem is one 422 listing every problem with `loc` `["body","items",i,...]` and nothing is written (a 403 or 409 of one item ' +
        'answers for the batch with `index`). An item equal to what is stored is `unchanged` and writes no event. `dry_run` answers the ' +
        'same and writes nothing. Each created or updated record is an ordinary event whose `actor` is the caller. The body is at most 2 MiB. ' +
        "FarmJob items are 422 at `entity_type` (jobs are made by `POST /farm/jobs`). A User's `data.email` is its login, checked as " +
        '`POST /entities/User` checks it: stored trimmed and lower-cased, a malformed address or `null` is 422, and one another User has ' +
        '(in any case, retired Users included) or another item of the batch has is 422 `duplicate_code`, each at ' +
        '`["body","items",i,"data","email"]`; the email of a User already imported is not changed by an import (422; ' +
        '`PATCH /entities/User/{id}` moves the login with it).',
      tags: TAGS,
      auth: 'bearer',
      body: SyncImportBody,
      allow: { roles: ADMIN, to: 'import from another tracker' },
      responses: { 200: { description: 'What each item did, in request order.', schema: SyncImportOut } },
      errors: [409, 503],
      handler: async ({ body, ctx }) => {
        const { json } = await peers.sync.import({ bodyJson: JSON.stringify(body) }, ctx);
        // A User written changes who may do what: every gateway forgets it before the answer, as after PATCH /entities/User.
        if (!body.dry_run && body.items.some((item) => item.entity_type === 'User')) {
          const answer = JSON.parse(json) as { items: { entity_type: string; id: string; result: string }[] };
          await Promise.all(answer.items.filter((item) => item.entity_type === 'User' && item.result === 'updated').map((item) => userChanged(item.id)));
        }
        // A Project written may change who reads it: this gateway reads the map again before the answer.
        if (!body.dry_run && body.items.some((item) => item.entity_type === PROJECT)) await access.refresh(true);
        return Reply.rawJson(json);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sync/mappings',
      operationId: 'syncMappings',
      summary: 'Mappings: `?source=&entity_type=&external_id=` (external → record) or `?id=` (record → every external id).',
      description:
        'With `source` alone or with `entity_type`: at most 1000 mappings, ordered by type and external id. `external_id` needs `entity_type`. ' +
        'Mappings of records in projects the caller may not read are not listed.',
      tags: TAGS,
      auth: 'bearer',
      query: SyncMappingsQuery,
      responses: { 200: { description: 'The mappings.', schema: SyncMappingList } },
      errors: [503],
      handler: async ({ query, ctx }) =>
        Reply.rawJson(
          (await peers.sync.mappings({ source: query.source, entityType: query.entity_type, externalId: query.external_id, id: query.id }, ctx)).json,
        ),
    }),
    defineRoute({
      method: 'get',
      path: '/sync/changes',
      operationId: 'syncChanges',
      summary: 'Record changes after an event id, oldest first, each with the record now and its external ids.',
      description:
        'One item per event of a record (any type of the record store: an event whose `entity_id` is a record of its `entity_type`; ' +
        'schema, addon, action, schedule and site-sync (`SiteSync`) events are left out) after `after`: ' +
        'the event id and action, the record as it is now (null once retired) and `external_ids` (source → external id). With `source`, ' +
        "the writes made by that source's own imports are left out (no echo). `next_after` is the last event looked at: send it back " +
        'as `after`. A page may hold fewer than `limit` items while events remain (those left out still move `next_after`). ' +
        'The events of a restricted project the caller may not read are left out (docs/api-notes.md, "Restricted projects").',
      tags: TAGS,
      auth: 'bearer',
      query: SyncChangesQuery,
      responses: { 200: { description: 'Changes.', schema: SyncChangeList } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        const items: unknown[] = [];
        let after = query.after;
        // A restricted project the caller may not read is left out of the log read, as GET /events does.
        const hiddenProjectIds = [...access.hiddenFor(ctx.principal)];
        for (let page = 0; page < CHANGES_MAX_PAGES && items.length < query.limit; page += 1) {
          const log = await peers.events.listEvents({ limit: query.limit, after, projectId: query.project_id, hiddenProjectIds }, ctx);
          if (log.items.length === 0) break;
          const infos = changeInfos(await peers.sync.changes(changesRequest(log.items, query.source), ctx));
          for (const [k, event] of log.items.entries()) {
            if (items.length >= query.limit) break;
            const info = infos[k]!;
            after = event.id;
            if (!info.is_record || info.echo) continue;
            items.push(changeJson(event, info));
          }
          if (log.items.length < query.limit && !log.truncated) break;
        }
        return { items, next_after: after };
      },
    }),
  ];
}
