/**
 * The statements of site sync (docs/sitesync.md). Every value is bound; timestamps leave
 * formatted by PostgreSQL and every lease is judged on its clock: a lease has run out when its
 * `lease_expires_at` is not after the statement's start (`statement_timestamp()`, which unlike
 * `clock_timestamp()` an index scan can compare against); new expiries count from the clock. The claim and the lapse are one
 * statement each: the rows they move are chosen, locked (SKIP LOCKED) and written together.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { sqlIsoMicros, type OutboxEntry } from '@reelbase/lib-platform';
import type { Site, SiteKind, SiteState, StateFilter, StateKey, StateStatus, StatusCounts } from '../domain/sitesync.types.js';
import { STATE_STATUSES } from '../domain/sitesync.types.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import type { Db } from '../../kernel/store/knex.db.js';
import { recordsOutbox } from '../../kernel/store/outbox.repository.js';
import { projectReadableSql, readableSql } from '../../kernel/store/project.readers.sql.js';
import type { ClaimInput, MovedState, ReportChange } from '../domain/sitesync.ports.js';

const SITE_COLUMNS = `id, code, name, kind, root, ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('updated_at')} as updated_at`;

/** The columns of a state, of table alias `a`. */
const stateColumns = (a: string) => `${a}.representation_id, ${a}.site, ${a}.project_id, ${a}.status, ${a}.priority, ${a}.progress,
  ${a}.size, ${a}.total_size, ${a}.attempts, ${a}.error, ${a}.agent,
  ${sqlIsoMicros(`${a}.lease_expires_at`)} as lease_expires_at, ${sqlIsoMicros(`${a}.updated_at`)} as updated_at`;

interface SiteRow {
  id: string;
  code: string;
  name: string;
  kind: SiteKind;
  root: string | null;
  created_at: string;
  updated_at: string;
}

interface StateRow {
  representation_id: string;
  site: string;
  project_id: string | null;
  status: StateStatus;
  priority: number;
  progress: number;
  size: string | null;
  total_size: string | null;
  attempts: number;
  error: string | null;
  agent: string | null;
  lease_expires_at: string | null;
  updated_at: string;
}

const toSite = (r: SiteRow): Site => ({ id: r.id, code: r.code, name: r.name, kind: r.kind, root: r.root, createdAt: r.created_at, updatedAt: r.updated_at });

const toState = (r: StateRow): SiteState => ({
  representationId: r.representation_id,
  site: r.site,
  projectId: r.project_id,
  status: r.status,
  priority: r.priority,
  progress: Number(r.progress),
  size: r.size === null ? null : Number(r.size),
  totalSize: r.total_size === null ? null : Number(r.total_size),
  attempts: r.attempts,
  error: r.error,
  agent: r.agent,
  leaseExpiresAt: r.lease_expires_at,
  updatedAt: r.updated_at,
});

/** A lease that ran out: queued again with an attempt counted, or failed at the last one (`$max`). */
const LAPSE_SET = (max: string, error: string) => `status = case when s.attempts + 1 >= ${max} then 'failed' else 'queued' end,
  attempts = s.attempts + 1, error = ${error}, lease_hash = null, lease_expires_at = null, updated_at = clock_timestamp()`;

/**
 * The reader rule on a state (kernel/store/project.readers.sql.ts): ` and <the state's project may be
 * read>` with the membership probe at `$probe`, or nothing for a caller who reads every project (whose
 * statements stay as they were).
 */
const andStateReadable = (reader: string | null, probe: string, alias = '') =>
  reader === null ? '' : ` and ${projectReadableSql(`${alias ? `${alias}.` : ''}project_id`, probe)}`;

/** The membership probe bound for `reader`, when there is one (the last value of a statement). */
const probeOf = (reader: string | null): string[] => (reader === null ? [] : [membershipProbe(reader)]);

/**
 * The claim, one statement (docs/sitesync.md, "The claim"):
 * - `expired`: the site's in_progress states whose lease ran out (lease index), locked;
 * - `queued`: the site's first `limit` queued states in claim order (claim index), locked;
 * - `chosen`: the first `limit` of both in claim order (an expired state with attempts left may be
 *   claimed at once), each with the index of its lease digest;
 * - `plan`: what becomes of each locked row: claimed (`in_progress`), or a lapse left behind
 *   (`queued`, or `failed` at the last attempt); queued rows not chosen are left as they are;
 * - one UPDATE writes the plan and returns every row it moved.
 * SKIP LOCKED: concurrent claimers never wait for each other's rows nor take them. For a caller who
 * may not read every project (`reader`, bound at `$8`), both `expired` and `queued` hold states of
 * projects they may read only: the others are left to the claims of those who may (and the sweeper).
 */
export const claimSql = (reader: string | null) => `
with expired as (
  select representation_id, site, priority, requested_at, attempts, agent
    from records.sitesync_state
   where status = 'in_progress' and lease_expires_at <= statement_timestamp() and site = $1${andStateReadable(reader, '$8')}
   order by lease_expires_at
   limit 1000
   for update skip locked
), queued as (
  select representation_id, site, priority, requested_at
    from records.sitesync_state
   where status = 'queued' and site = $1${andStateReadable(reader, '$8')}
   order by priority desc, requested_at, representation_id
   limit $2
   for update skip locked
), candidates as (
  select representation_id, site, priority, requested_at, true as lapsed from expired where attempts + 1 < $3
  union all
  select representation_id, site, priority, requested_at, false from queued
), chosen as (
  select representation_id, site, lapsed, (row_number() over (order by priority desc, requested_at, representation_id))::int as lease_index
    from candidates
   order by priority desc, requested_at, representation_id
   limit $2
), plan as (
  select e.representation_id, e.site, true as lapsed, c.lease_index, e.agent as lapsed_agent,
         case when c.lease_index is not null then 'in_progress' when e.attempts + 1 >= $3 then 'failed' else 'queued' end as next
    from expired e left join chosen c on c.representation_id = e.representation_id and c.site = e.site
  union all
  select c.representation_id, c.site, false, c.lease_index, null, 'in_progress' from chosen c where not c.lapsed
)
update records.sitesync_state s set
  status = p.next,
  attempts = s.attempts + case when p.lapsed then 1 else 0 end,
  error = case when p.lapsed then $7 else s.error end,
  agent = case when p.next = 'in_progress' then $4 else s.agent end,
  progress = case when p.next = 'in_progress' then 0 else s.progress end,
  lease_hash = case when p.next = 'in_progress' then ($5::bytea[])[p.lease_index] end,
  lease_expires_at = case when p.next = 'in_progress' then clock_timestamp() + make_interval(secs => $6) end,
  lease_seconds = case when p.next = 'in_progress' then $6 else s.lease_seconds end,
  updated_at = clock_timestamp()
  from plan p
 where s.representation_id = p.representation_id and s.site = p.site
returning ${stateColumns('s')}, p.lapsed, p.lapsed_agent, case when p.next = 'in_progress' then p.lease_index - 1 end as lease_index`;

/** Run-out leases of one state or of any site (the sweeper), locked with SKIP LOCKED, lapsed in one statement. */
const lapseSql = (where: string, limit: string) => `
with expired as (
  select representation_id, site from records.sitesync_state
   where status = 'in_progress' and lease_expires_at <= statement_timestamp() ${where}
   order by lease_expires_at
   limit ${limit}
   for update skip locked
)
update records.sitesync_state s set ${LAPSE_SET('$1', '$2')}
  from expired e
 where s.representation_id = e.representation_id and s.site = e.site
returning ${stateColumns('s')}`;

export const LAPSE_ONE_SQL = lapseSql('and representation_id = $3 and site = $4', '1');
export const LAPSE_ANY_SQL = lapseSql('', '$3');

/**
 * A report under the state's current, unexpired lease (compared as SHA-256 digests):
 * in_progress extends the lease by the claim's lease_seconds, synced ends it, failed ends it and
 * counts an attempt (queued again, failed at the last). A state `reader` (bound at `$10`) may not
 * read is not changed.
 */
export const reportSql = (reader: string | null) => `
update records.sitesync_state s set
  status = case $4::text when 'in_progress' then 'in_progress' when 'synced' then 'synced'
                         else case when s.attempts + 1 >= $9 then 'failed' else 'queued' end end,
  attempts = s.attempts + case when $4::text = 'failed' then 1 else 0 end,
  progress = case $4::text when 'synced' then 1 when 'in_progress' then coalesce($5::float8, s.progress) else s.progress end,
  size = coalesce($6::bigint, s.size),
  total_size = coalesce($7::bigint, s.total_size),
  error = case $4::text when 'synced' then null when 'failed' then $8 else coalesce($8, s.error) end,
  lease_hash = case when $4::text = 'in_progress' then s.lease_hash end,
  lease_expires_at = case when $4::text = 'in_progress' then clock_timestamp() + make_interval(secs => s.lease_seconds) end,
  updated_at = clock_timestamp()
 where s.representation_id = $1 and s.site = $2 and s.status = 'in_progress' and s.lease_hash = $3
   and s.lease_expires_at > statement_timestamp()${andStateReadable(reader, '$10', 's')}
returning ${stateColumns('s')}`;

/**
 * A state page: filters, then the keyset condition, in (representation_id, site) order; states of
 * projects `reader` may not read are left out.
 */
export function pageSql(filter: StateFilter, after: StateKey | undefined, reader: string | null = null): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const bind = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  if (filter.projectId !== undefined) where.push(`project_id = ${bind(filter.projectId)}`);
  if (filter.site !== undefined) where.push(`site = ${bind(filter.site)}`);
  if (filter.status !== undefined) where.push(`status = ${bind(filter.status)}`);
  if (filter.representationId !== undefined) where.push(`representation_id = ${bind(filter.representationId)}`);
  if (after) where.push(`(representation_id, site) > (${bind(after.representationId)}::uuid, ${bind(after.site)}::text)`);
  if (reader !== null) where.push(projectReadableSql('project_id', bind(membershipProbe(reader))));
  const sql = `select ${stateColumns('t')} from records.sitesync_state t ${where.length ? `where ${where.join(' and ')}` : ''}
    order by representation_id, site limit ${bind(0)}`;
  return { sql, params };
}

/**
 * The statements here number their values (`$1`, reused where a value appears twice); Knex binds
 * `?` in order, so each `$n` becomes a `?` with its value.
 */
function positional(sql: string, params: readonly unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const out = sql.replace(/\$(\d+)/g, (_m, n: string) => {
    bindings.push(params[Number(n) - 1]);
    return '?';
  });
  return { sql: out, bindings };
}

export class SiteSyncRepository {
  constructor(private readonly db: Db) {}

  private async q<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    const p = positional(sql, params);
    const res = await this.db.raw<{ rows: R[] }>(p.sql, p.bindings as Knex.RawBinding[]);
    return res.rows;
  }

  /**
   * Appends events to the records outbox in one statement, in the given order (their `seq`
   * follows it); call inside the change's transaction.
   */
  appendEvents(rows: readonly OutboxEntry[]): Promise<void> {
    return recordsOutbox.appendAll(this.db, rows);
  }

  async listSites(): Promise<Site[]> {
    return (await this.q<SiteRow>(`select ${SITE_COLUMNS} from records.sitesync_site order by code`, [])).map(toSite);
  }

  async findSite(code: string, lock?: 'update' | 'share'): Promise<Site | undefined> {
    const suffix = lock === 'update' ? ' for update' : lock === 'share' ? ' for key share' : '';
    const r = await this.q<SiteRow>(`select ${SITE_COLUMNS} from records.sitesync_site where code = $1${suffix}`, [code]);
    return r[0] ? toSite(r[0]) : undefined;
  }

  async upsertSite(s: {
    id: string;
    code: string;
    name: string;
    kind: SiteKind;
    root: string | null;
  }): Promise<{ site: Site; created: boolean; changed: boolean }> {
    const written = await this.q<SiteRow & { created: boolean }>(
      `insert into records.sitesync_site as x (id, code, name, kind, root) values ($1, $2, $3, $4, $5)
       on conflict (code) do update set name = excluded.name, kind = excluded.kind, root = excluded.root, updated_at = clock_timestamp()
        where (x.name, x.kind, x.root) is distinct from (excluded.name, excluded.kind, excluded.root)
       returning ${SITE_COLUMNS}, (xmax = 0) as created`,
      [s.id, s.code, s.name, s.kind, s.root],
    );
    if (written[0]) return { site: toSite(written[0]), created: written[0].created, changed: true };
    const site = await this.findSite(s.code);
    return { site: site!, created: false, changed: false };
  }

  async deleteSite(code: string): Promise<void> {
    await this.q('delete from records.sitesync_site where code = $1', [code]);
  }

  async countStatesOf(site: string): Promise<number> {
    const r = await this.q<{ n: string }>('select count(*) as n from records.sitesync_state where site = $1', [site]);
    return Number(r[0]?.n ?? 0);
  }

  async liveRepresentations(ids: readonly string[], reader: string | null): Promise<{ id: string; projectId: string | null }[]> {
    const readable = reader === null ? '' : ` and ${readableSql('r', '$2')}`;
    const r = await this.q<{ id: string; project_id: string | null }>(
      `select r.id, r.project_id from records.record r
        where r.id = any($1::uuid[]) and r.entity_type = 'Representation' and r.retired_at is null${readable}
        for key share of r`,
      [ids as string[], ...probeOf(reader)],
    );
    return r.map((x) => ({ id: x.id, projectId: x.project_id }));
  }

  /**
   * The states of one request share its `requested_at` (the statement's start), so among them the
   * claim order falls back to the representation id (UUID v7: the order they were created in).
   */
  async requestStates(
    reps: readonly { id: string; projectId: string | null }[],
    site: string,
    priority: number,
    keep: readonly string[],
  ): Promise<{ state: SiteState; created: boolean }[]> {
    if (reps.length === 0) return [];
    const r = await this.q<StateRow & { created: boolean }>(
      `insert into records.sitesync_state as s (representation_id, site, project_id, status, priority, requested_at)
       select r.id, $2, r.project_id, 'queued', $3, statement_timestamp() from unnest($1::uuid[], $4::uuid[]) as r(id, project_id)
       on conflict (representation_id, site) do update set
         status = 'queued', priority = excluded.priority, project_id = excluded.project_id, attempts = 0, error = null,
         progress = 0, lease_hash = null, lease_expires_at = null, requested_at = excluded.requested_at, updated_at = clock_timestamp()
        where s.status <> all($5::text[])
       returning ${stateColumns('s')}, (xmax = 0) as created`,
      [reps.map((x) => x.id), site, priority, reps.map((x) => x.projectId), keep as string[]],
    );
    return r.map((x) => ({ state: toState(x), created: x.created }));
  }

  async claim(c: ClaimInput): Promise<MovedState[]> {
    const r = await this.q<StateRow & { lapsed: boolean; lapsed_agent: string | null; lease_index: number | null }>(claimSql(c.reader), [
      c.site,
      c.leaseDigests.length,
      c.maxAttempts,
      c.agent,
      c.leaseDigests as Buffer[],
      c.leaseSeconds,
      c.lapseError,
      ...probeOf(c.reader),
    ]);
    return r.map((x) => ({ state: toState(x), lapsed: x.lapsed, lapsedAgent: x.lapsed_agent, leaseIndex: x.lease_index }));
  }

  async lapse(scope: { key: StateKey } | { limit: number }, maxAttempts: number, lapseError: string): Promise<SiteState[]> {
    const r =
      'key' in scope
        ? await this.q<StateRow>(LAPSE_ONE_SQL, [maxAttempts, lapseError, scope.key.representationId, scope.key.site])
        : await this.q<StateRow>(LAPSE_ANY_SQL, [maxAttempts, lapseError, scope.limit]);
    return r.map(toState);
  }

  async report(c: ReportChange): Promise<SiteState | undefined> {
    const r = await this.q<StateRow>(reportSql(c.reader), [
      c.key.representationId,
      c.key.site,
      c.leaseDigest,
      c.status,
      c.progress ?? null,
      c.size ?? null,
      c.totalSize ?? null,
      c.error ?? null,
      c.maxAttempts,
      ...probeOf(c.reader),
    ]);
    return r[0] ? toState(r[0]) : undefined;
  }

  /** The state of `key`; none when `reader` may not read its project. */
  async findState(key: StateKey, reader: string | null, lock = false): Promise<SiteState | undefined> {
    const r = await this.q<StateRow>(
      `select ${stateColumns('t')} from records.sitesync_state t
        where representation_id = $1 and site = $2${andStateReadable(reader, '$3', 't')}${lock ? ' for update' : ''}`,
      [key.representationId, key.site, ...probeOf(reader)],
    );
    return r[0] ? toState(r[0]) : undefined;
  }

  async setState(key: StateKey, status: string, priority: number, resetAttempts: boolean): Promise<SiteState> {
    const r = await this.q<StateRow>(
      `update records.sitesync_state s set
         requested_at = case when $3::text = 'queued' and s.status <> 'queued' then clock_timestamp() else s.requested_at end,
         progress = case when $3::text = 'queued' and s.status <> 'queued' then 0 else s.progress end,
         status = $3, priority = $4,
         attempts = case when $5::boolean then 0 else s.attempts end,
         error = case when $5::boolean then null else s.error end,
         lease_hash = null, lease_expires_at = null, updated_at = clock_timestamp()
        where s.representation_id = $1 and s.site = $2
       returning ${stateColumns('s')}`,
      [key.representationId, key.site, status, priority, resetAttempts],
    );
    return toState(r[0]!);
  }

  async listStates(filter: StateFilter, after: StateKey | undefined, limit: number, reader: string | null): Promise<SiteState[]> {
    const { sql, params } = pageSql(filter, after, reader);
    params[params.length - 1] = limit;
    return (await this.q<StateRow>(sql, params)).map(toState);
  }

  async countStates(filter: Pick<StateFilter, 'projectId' | 'site'>, reader: string | null): Promise<StatusCounts> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.projectId !== undefined) where.push(`project_id = $${params.push(filter.projectId)}`);
    if (filter.site !== undefined) where.push(`site = $${params.push(filter.site)}`);
    if (reader !== null) where.push(projectReadableSql('project_id', `$${params.push(membershipProbe(reader))}`));
    const r = await this.q<{ status: StateStatus; n: string }>(
      `select status, count(*) as n from records.sitesync_state ${where.length ? `where ${where.join(' and ')}` : ''} group by status`,
      params,
    );
    const counts = Object.fromEntries(STATE_STATUSES.map((s) => [s, 0])) as StatusCounts;
    for (const x of r) counts[x.status] = Number(x.n);
    return counts;
  }
}
