/**
 * The rules of site sync (docs/sitesync.md), pure: who may do what, what a body may hold, which
 * status may follow which, the page cursor, the lease tokens and the events a change writes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError, isUuid, type Principal, type Problem, type StreamEvent } from '@reelbase/lib-platform';
import { actorOf } from '../../kernel/domain/record.event.js';
import {
  AGENT_MAX,
  CLAIM_LIMIT,
  ERROR_MAX,
  LEASE_SECONDS,
  LEASE_TOKEN,
  PAGE_LIMIT,
  PATCH_STATUSES,
  PRIORITY,
  REPORT_STATUSES,
  REQUEST_IDS,
  SITE_CODE,
  SITE_KINDS,
  SITE_NAME_MAX,
  SITE_ROOT_MAX,
  STATE_STATUSES,
  type PatchStatus,
  type ReportStatus,
  type Site,
  type SiteState,
  type StateKey,
  type StateStatus,
} from './sitesync.types.js';

/** The entity type of every site sync event. */
export const SITESYNC_ENTITY_TYPE = 'SiteSync';

// --- roles -------------------------------------------------------------------------------------

/** Sites are managed by Admins (and services acting on their own). */
export function assertSiteAdmin(principal: Principal | undefined): Principal {
  if (!principal || (principal.role !== 'Admin' && principal.role !== 'Service')) {
    throw new AppError('forbidden', 'only an Admin may change sync sites');
  }
  return principal;
}

/** Requests, changes, claims and reports: any signed-in role but Viewer (and never a guest). */
export function assertWriter(principal: Principal | undefined): Principal {
  if (!principal || principal.role === 'Viewer' || principal.role === 'Guest') {
    throw new AppError('forbidden', 'a Viewer may read site sync states but not change them');
  }
  return principal;
}

/** Reads: any signed-in role. */
export function assertReader(principal: Principal | undefined): Principal {
  if (!principal || principal.role === 'Guest') throw new AppError('forbidden', 'site sync is not open to guests');
  return principal;
}

// --- bodies ------------------------------------------------------------------------------------

const problem = (loc: (string | number)[], msg: string, type: string): Problem => ({ loc, msg, type });

function checkSiteCode(code: string, loc: (string | number)[], problems: Problem[]): void {
  if (!SITE_CODE.test(code)) problems.push(problem(loc, `a site code matches ${SITE_CODE.source}`, 'string_pattern_mismatch'));
}

function checkInt(v: number | undefined, loc: string, range: { min: number; max: number }, problems: Problem[]): void {
  if (v === undefined) return;
  if (!Number.isInteger(v) || v < range.min || v > range.max) {
    problems.push(problem([loc], `Input should be an integer from ${range.min} to ${range.max}`, 'int_range'));
  }
}

function checkText(v: string | undefined | null, loc: string, max: number, problems: Problem[], required = false): void {
  if (v === undefined || v === null) {
    if (required) problems.push(problem([loc], 'Field required', 'missing'));
    return;
  }
  if (v.length < (required ? 1 : 0) || v.length > max) problems.push(problem([loc], `${required ? 1 : 0} to ${max} characters`, 'string_length'));
}

const fail = (problems: Problem[]) => {
  if (problems.length) throw AppError.invalid(problems);
};

export function checkSite(input: { code: string; name: string; kind: string; root?: string | null }): void {
  const problems: Problem[] = [];
  checkSiteCode(input.code, ['code'], problems);
  checkText(input.name, 'name', SITE_NAME_MAX, problems, true);
  if (!(SITE_KINDS as readonly string[]).includes(input.kind)) problems.push(problem(['kind'], `Input should be ${SITE_KINDS.join(', ')}`, 'enum'));
  checkText(input.root, 'root', SITE_ROOT_MAX, problems);
  fail(problems);
}

/** The ids of a request, lower-cased and without repeats (422 for anything not a UUID). */
export function checkRequest(input: { representationIds: readonly string[]; site: string; priority: number }): string[] {
  const problems: Problem[] = [];
  const n = input.representationIds.length;
  if (n < REQUEST_IDS.min || n > REQUEST_IDS.max) {
    problems.push(problem(['representation_ids'], `from ${REQUEST_IDS.min} to ${REQUEST_IDS.max} ids`, 'too_long'));
  }
  input.representationIds.forEach((id, i) => {
    if (!isUuid(id)) problems.push(problem(['representation_ids', i], 'Input should be a valid UUID', 'uuid_parsing'));
  });
  checkSiteCode(input.site, ['site'], problems);
  checkInt(input.priority, 'priority', PRIORITY, problems);
  fail(problems);
  return [...new Set(input.representationIds.map((id) => id.toLowerCase()))];
}

export function checkClaim(input: { site: string; agent: string; limit: number; leaseSeconds: number }): void {
  const problems: Problem[] = [];
  checkSiteCode(input.site, ['site'], problems);
  checkText(input.agent, 'agent', AGENT_MAX, problems, true);
  checkInt(input.limit, 'limit', CLAIM_LIMIT, problems);
  checkInt(input.leaseSeconds, 'lease_seconds', LEASE_SECONDS, problems);
  fail(problems);
}

export interface ReportInput {
  representationId: string;
  site: string;
  lease: string;
  status: string;
  progress?: number;
  size?: number;
  totalSize?: number;
  error?: string;
}

export function checkReport(input: ReportInput): ReportStatus {
  const problems: Problem[] = [];
  if (input.lease.length === 0 || input.lease.length > 256) problems.push(problem(['lease'], '1 to 256 characters', 'string_length'));
  if (!(REPORT_STATUSES as readonly string[]).includes(input.status)) {
    problems.push(problem(['status'], `Input should be ${REPORT_STATUSES.join(', ')}`, 'enum'));
  }
  if (input.progress !== undefined && !(input.progress >= 0 && input.progress <= 1)) problems.push(problem(['progress'], 'from 0 to 1', 'number_range'));
  for (const [k, v] of [
    ['size', input.size],
    ['total_size', input.totalSize],
  ] as const) {
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 0)) problems.push(problem([k], 'a whole number of bytes, 0 or more', 'int_range'));
  }
  checkText(input.error, 'error', ERROR_MAX, problems);
  fail(problems);
  return input.status as ReportStatus;
}

export function checkPatch(input: { status: string; priority?: number }): PatchStatus {
  const problems: Problem[] = [];
  if (!(PATCH_STATUSES as readonly string[]).includes(input.status)) problems.push(problem(['status'], `Input should be ${PATCH_STATUSES.join(', ')}`, 'enum'));
  checkInt(input.priority, 'priority', PRIORITY, problems);
  fail(problems);
  return input.status as PatchStatus;
}

/** Filters of a state page or a summary. */
export function checkFilter(input: { projectId?: string; site?: string; status?: string; representationId?: string }): void {
  const problems: Problem[] = [];
  if (input.projectId !== undefined && !isUuid(input.projectId)) problems.push(problem(['project_id'], 'Input should be a valid UUID', 'uuid_parsing'));
  if (input.representationId !== undefined && !isUuid(input.representationId)) {
    problems.push(problem(['representation_id'], 'Input should be a valid UUID', 'uuid_parsing'));
  }
  if (input.site !== undefined) checkSiteCode(input.site, ['site'], problems);
  if (input.status !== undefined && !(STATE_STATUSES as readonly string[]).includes(input.status)) {
    problems.push(problem(['status'], `Input should be ${STATE_STATUSES.join(', ')}`, 'enum'));
  }
  fail(problems);
}

export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || limit === 0) return PAGE_LIMIT.default;
  if (!Number.isInteger(limit) || limit < PAGE_LIMIT.min || limit > PAGE_LIMIT.max) {
    throw AppError.invalid([problem(['limit'], `Input should be an integer from ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max}`, 'int_range')]);
  }
  return limit;
}

// --- the state machine -------------------------------------------------------------------------

/**
 * The statuses a PATCH may move a state from, per target. `queued` and `removed` are allowed from
 * every status (a manual retry, a re-sync, a take-back); `paused` only holds back work that is
 * waiting or running.
 */
const PATCH_FROM: Record<PatchStatus, readonly StateStatus[]> = {
  queued: STATE_STATUSES,
  removed: STATE_STATUSES,
  paused: ['queued', 'in_progress', 'paused'],
};

/** 409 `transition_not_allowed` unless `from` may become `to` by PATCH. */
export function assertPatchTransition(from: StateStatus, to: PatchStatus): void {
  if (!PATCH_FROM[to].includes(from)) {
    throw AppError.conflict('transition_not_allowed', `a ${from} state cannot be ${to}; only queued or in_progress states can be paused`);
  }
}

/** Statuses a request leaves alone: the representation is already on its way or there. */
export const REQUEST_KEEPS: readonly StateStatus[] = ['queued', 'in_progress', 'synced'];

// --- cursors and leases ------------------------------------------------------------------------

export function encodeCursor(key: StateKey): string {
  return Buffer.from(JSON.stringify([key.representationId, key.site])).toString('base64url');
}

/** The key a cursor names; 422 `["cursor"]` for anything this service did not write. */
export function decodeCursor(cursor: string): StateKey {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && isUuid(v[0]) && typeof v[1] === 'string' && SITE_CODE.test(v[1])) {
      return { representationId: v[0].toLowerCase(), site: v[1] };
    }
  } catch {
    // fall through
  }
  throw AppError.invalid([problem(['cursor'], 'not a cursor of this list', 'value_error')]);
}

/** A new lease: the token (answered once) and the SHA-256 digest kept in its place. */
export function newLease(): { token: string; digest: Buffer } {
  const token = `ssl_${randomBytes(32).toString('base64url')}`;
  return { token, digest: leaseDigest(token) };
}

export function leaseDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** True for the shape of a lease this service hands out (anything else cannot be a current lease). */
export const isLeaseToken = (s: string): boolean => LEASE_TOKEN.test(s);

// --- events ------------------------------------------------------------------------------------

/**
 * The changes of a state's event: the site (the entity is the representation, which may be on
 * several sites) and what moves with a status.
 */
export function stateChanges(s: SiteState): Record<string, unknown> {
  return { site: s.site, status: s.status, priority: s.priority, attempts: s.attempts, agent: s.agent, error: s.error };
}

export function stateEvent(eventId: string, s: SiteState, action: 'create' | 'update', principal: Principal | undefined): StreamEvent {
  return {
    event_id: eventId,
    entity_type: SITESYNC_ENTITY_TYPE,
    entity_id: s.representationId,
    project_id: s.projectId,
    action,
    actor: actorOf(principal),
    changes: stateChanges(s),
    occurred_at: s.updatedAt,
  };
}

export function siteEvent(eventId: string, site: Site, action: 'create' | 'update' | 'delete', principal: Principal | undefined, at: string): StreamEvent {
  return {
    event_id: eventId,
    entity_type: SITESYNC_ENTITY_TYPE,
    entity_id: site.id,
    project_id: null,
    action,
    actor: actorOf(principal),
    changes: action === 'delete' ? {} : { site: site.code, name: site.name, kind: site.kind, root: site.root },
    occurred_at: at,
  };
}
