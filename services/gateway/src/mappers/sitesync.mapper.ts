/**
 * Site sync's gRPC messages and the site sync routes' bodies (docs/api-notes.md, "Site sync"):
 * request bodies and queries → SiteSyncService requests, sites and states → their client form.
 */
import type { sitesyncv1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { ClaimBody, ReportBody, SitePut, StatePatch, StatesQuery, SyncRequestBody } from '../schemas/sitesync.schema.js';

type StateAt = { representation_id: string; site: string };

/** PUT /sitesync/sites/{code} → PutSite. */
export function putSiteRequest(code: string, body: z.output<typeof SitePut>): sitesyncv1.PutSiteRequest {
  return { code, name: body.name, kind: body.kind, root: body.root ?? undefined };
}

/** POST /sitesync/requests → RequestSync. */
export function requestSyncRequest(body: z.output<typeof SyncRequestBody>): sitesyncv1.RequestSyncRequest {
  return { representationIds: body.representation_ids, site: body.site, priority: body.priority };
}

/** GET /sitesync/state → ListStates. */
export function listStatesRequest(query: z.output<typeof StatesQuery>): sitesyncv1.ListStatesRequest {
  return {
    projectId: query.project_id,
    site: query.site,
    status: query.status,
    representationId: query.representation_id,
    limit: query.limit,
    cursor: query.cursor,
  };
}

/** POST /sitesync/claim → ClaimStates. */
export function claimStatesRequest(body: z.output<typeof ClaimBody>): sitesyncv1.ClaimStatesRequest {
  return { site: body.site, agent: body.agent, limit: body.limit, leaseSeconds: body.lease_seconds };
}

/** POST /sitesync/state/{representation_id}/{site} → ReportState. */
export function reportStateRequest(at: StateAt, body: z.output<typeof ReportBody>): sitesyncv1.ReportStateRequest {
  return {
    representationId: at.representation_id,
    site: at.site,
    lease: body.lease,
    status: body.status,
    progress: body.progress,
    size: body.size,
    totalSize: body.total_size,
    error: body.error,
  };
}

/** PATCH /sitesync/state/{representation_id}/{site} → UpdateState. */
export function updateStateRequest(at: StateAt, body: z.output<typeof StatePatch>): sitesyncv1.UpdateStateRequest {
  return { representationId: at.representation_id, site: at.site, status: body.status, priority: body.priority };
}

/** A site (`SyncSite`). */
export function siteJson(s: sitesyncv1.Site) {
  return { id: s.id, code: s.code, name: s.name, kind: s.kind, root: s.root ?? null, created_at: s.createdAt, updated_at: s.updatedAt };
}

/** A state (`SyncState`). */
export function stateJson(s: sitesyncv1.SiteState) {
  return {
    representation_id: s.representationId,
    site: s.site,
    project_id: s.projectId ?? null,
    status: s.status,
    priority: s.priority,
    progress: s.progress,
    size: s.size ?? null,
    total_size: s.totalSize ?? null,
    attempts: s.attempts,
    error: s.error ?? null,
    agent: s.agent ?? null,
    lease_expires_at: s.leaseExpiresAt ?? null,
    updated_at: s.updatedAt,
  };
}

/** How many a request queued and left unchanged (`SyncRequestResult`). */
export function requestSyncJson(out: sitesyncv1.RequestSyncResponse) {
  return { queued: out.queued, unchanged: out.unchanged };
}

/** A page of states (`SyncStatePage`). */
export function statePageJson(page: sitesyncv1.ListStatesResponse) {
  return { items: page.items.map(stateJson), next_cursor: page.nextCursor ?? null };
}

/** States per status (`SyncSummary`). */
export function summaryJson(out: sitesyncv1.SummarizeStatesResponse) {
  return { counts: Object.fromEntries(out.counts.map((c) => [c.status, c.count])) };
}

/** The claimed states, each with its lease (`SyncClaimResult`). */
export function claimedStatesJson(out: sitesyncv1.ClaimStatesResponse) {
  return { items: out.items.map((c) => ({ ...stateJson(c.state!), lease: c.lease })) };
}
