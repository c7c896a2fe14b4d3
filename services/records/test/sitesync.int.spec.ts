/**
 * Site sync against the real PostgreSQL through a real gRPC client (docs/sitesync.md): sites,
 * requests, the claim statement (order, site, limit, exactly once under concurrent claimers),
 * leases judged on the database's clock (moved into the past with SQL), reports, PATCH, the
 * sweeper, the SiteSync events on the stream, and the plans of the claim and the pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, newId, type CallContext, type GrpcClient, type Role } from '@reelbase/lib-platform';
import { appErrorOf, TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import { recordsv1, sitesyncv1 } from '@reelbase/proto';
import pg from 'pg';
import { claimSql, pageSql } from '../src/sitesync/store/sitesync.repository.js';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const as = (role: Role, userId: string = newId()): CallContext => ({ requestId: `r-${role}`, principal: { userId, role, authKind: 'token' } });
const admin = as('Admin');
const artist = as('Artist');
const viewer = as('Viewer');

let world: RecordsWorld;
let records: GrpcClient<recordsv1.RecordsServiceClient>;
let ss: GrpcClient<sitesyncv1.SiteSyncServiceClient>['call'];
let ssClient: GrpcClient<sitesyncv1.SiteSyncServiceClient>;
let sql: pg.Client;
let stream: StreamReader;
let projectId: string;

beforeAll(async () => {
  world = await startRecordsWorld('sitesync', { OUTBOX_POLL_MS: '200', SITESYNC_SWEEP_MS: '200' });
  ({ client: records, sql } = world);
  ssClient = createGrpcClient(sitesyncv1.SiteSyncServiceClient, sitesyncv1.SiteSyncServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'sitesync-test',
    address: `127.0.0.1:${world.running.grpcPort}`,
  });
  ss = ssClient.call;
  stream = await StreamReader.open(world.prefix);
  projectId = (await records.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'Sync', code: 'sync' }) }, admin)).record!.id;
}, 60_000);

afterAll(async () => {
  ssClient?.close();
  await stream?.close();
  await world?.stop();
});

async function reps(n: number, project = projectId): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      (await records.call.createRecord({ entityType: 'Representation', projectId: project, dataJson: JSON.stringify({ name: `r${i}` }) }, admin)).record!.id,
    );
  }
  return out;
}

/** A claim with the defaults of unset numbers (0). */
const claim = (req: Partial<sitesyncv1.ClaimStatesRequest> & { site: string; agent: string }, ctx: CallContext) =>
  ss.claimStates({ limit: 0, leaseSeconds: 0, ...req }, ctx);

/** Exactly `n` SiteSync events about the representation (beside its own create event). */
const syncEvents = async (rep: string, n: number) => (await stream.exactly(rep, n + 1)).filter((e) => e.payload.entity_type === 'SiteSync');

/**
 * One claimed state, claiming again while none comes back: a claim skips a state the sweeper holds
 * (SKIP LOCKED) while it lapses it, so right after a lease runs out one claim may find nothing.
 */
async function claimDue(code: string, agent: string): Promise<sitesyncv1.ClaimedState> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const [c] = (await claim({ site: code, agent }, artist)).items;
    if (c || Date.now() > deadline) return c!;
    await new Promise((r) => setTimeout(r, 50));
  }
}

let siteN = 0;
async function site(code = `site-${++siteN}`): Promise<string> {
  await ss.putSite({ code, name: code.toUpperCase(), kind: 'remote' }, admin);
  return code;
}

const state = async (rep: string, code: string) =>
  (
    await sql.query(
      'select status, attempts, error, agent, lease_expires_at, priority from records.sitesync_state where representation_id = $1 and site = $2',
      [rep, code],
    )
  ).rows[0];
const expire = (rep: string, code: string) =>
  sql.query(`update records.sitesync_state set lease_expires_at = clock_timestamp() - interval '1 second' where representation_id = $1 and site = $2`, [
    rep,
    code,
  ]);

describe('sites', () => {
  it('creates, changes, lists and deletes; Admin only; 409 code_in_use with usage while states name it', async () => {
    const put = await ss.putSite({ code: 'paris', name: 'Paris', kind: 'studio', root: '/mnt/paris' }, admin);
    expect(put.created).toBe(true);
    expect(put.site).toMatchObject({ code: 'paris', name: 'Paris', kind: 'studio', root: '/mnt/paris' });
    const again = await ss.putSite({ code: 'paris', name: 'Paris', kind: 'studio', root: '/mnt/paris' }, admin);
    expect(again.created).toBe(false);
    expect(again.site!.updatedAt).toBe(put.site!.updatedAt); // unchanged: nothing written
    const changed = await ss.putSite({ code: 'paris', name: 'Paris HQ', kind: 'studio' }, admin);
    expect(changed.site).toMatchObject({ name: 'Paris HQ', id: put.site!.id });
    expect(changed.site!.root).toBeUndefined();
    expect((await ss.listSites({}, viewer)).sites.map((s) => s.code)).toContain('paris');

    expect((await appErrorOf(ss.putSite({ code: 'x', name: 'X', kind: 'remote' }, as('Supervisor')))).kind).toBe('forbidden');
    const bad = await appErrorOf(ss.putSite({ code: 'Bad Code', name: '', kind: 'moon' }, admin));
    expect(bad.problems?.map((p) => p.loc)).toEqual([['code'], ['name'], ['kind']]);

    const [r] = await reps(1);
    await ss.requestSync({ representationIds: [r!], site: 'paris' }, artist);
    const inUse = await appErrorOf(ss.deleteSite({ code: 'paris' }, admin));
    expect(inUse).toMatchObject({ kind: 'conflict', code: 'code_in_use' });
    expect(inUse.extra).toEqual({ usage: 1 });
    await sql.query(`delete from records.sitesync_state where site = 'paris'`);
    expect((await ss.deleteSite({ code: 'paris' }, admin)).site!.code).toBe('paris');
    expect((await appErrorOf(ss.deleteSite({ code: 'paris' }, admin))).kind).toBe('not_found');
    const events = await stream.exactly(put.site!.id, 3);
    expect(events.map((e) => [e.payload.entity_type, e.payload.action])).toEqual([
      ['SiteSync', 'create'],
      ['SiteSync', 'update'],
      ['SiteSync', 'delete'],
    ]);
    expect(events[0]!.payload.changes).toEqual({ site: 'paris', name: 'Paris', kind: 'studio', root: '/mnt/paris' });
  });
});

describe('requests', () => {
  it('queues new and finished-badly states, leaves queued, in_progress and synced ones; 422 for unknown ids and sites; Viewer 403', async () => {
    const code = await site();
    const ids = await reps(5);
    expect(await ss.requestSync({ representationIds: ids.slice(0, 3), site: code, priority: 70 }, artist)).toEqual({ queued: 3, unchanged: 0 });
    expect(await ss.requestSync({ representationIds: ids, site: code }, artist)).toEqual({ queued: 2, unchanged: 3 });
    // in_progress, synced, failed, paused, removed
    const claimed = (await claim({ site: code, agent: 'a', limit: 2 }, artist)).items;
    await ss.reportState({ representationId: claimed[1]!.state!.representationId, site: code, lease: claimed[1]!.lease, status: 'synced' }, artist);
    await ss.updateState({ representationId: ids[2]!, site: code, status: 'paused' }, artist);
    await ss.updateState({ representationId: ids[3]!, site: code, status: 'removed' }, artist);
    await sql.query(`update records.sitesync_state set status = 'failed', attempts = 5 where representation_id = $1 and site = $2`, [ids[4], code]);
    expect(await ss.requestSync({ representationIds: [...ids, ids[0]!.toUpperCase()], site: code, priority: 10 }, artist)).toEqual({ queued: 3, unchanged: 2 });
    expect(await state(ids[4]!, code)).toMatchObject({ status: 'queued', attempts: 0, priority: 10 });
    expect((await state(claimed[0]!.state!.representationId, code)).status).toBe('in_progress');

    const missing = newId();
    const err = await appErrorOf(ss.requestSync({ representationIds: [ids[0]!, missing, projectId], site: 'nowhere' }, artist));
    expect(err.kind).toBe('invalid');
    expect(err.problems?.map((p) => p.loc)).toEqual([['site'], ['representation_ids', 1], ['representation_ids', 2]]);
    expect((await appErrorOf(ss.requestSync({ representationIds: [ids[0]!], site: code }, viewer))).kind).toBe('forbidden');
    const ev = await syncEvents(ids[4]!, 2);
    expect(ev.map((e) => [e.payload.action, e.payload.changes.status])).toEqual([
      ['create', 'queued'],
      ['update', 'queued'],
    ]);
    expect(ev[0]!.payload).toMatchObject({ entity_type: 'SiteSync', project_id: projectId, changes: { site: code, priority: 50, attempts: 0 } });
  });
});

describe('claims', () => {
  it('hands out queued states of that site only, highest priority then oldest, at most limit; nothing due: empty', async () => {
    const code = await site();
    const other = await site();
    const ids = await reps(6);
    await ss.requestSync({ representationIds: [ids[0]!, ids[1]!], site: code, priority: 10 }, artist);
    await ss.requestSync({ representationIds: [ids[2]!], site: code, priority: 90 }, artist);
    await ss.requestSync({ representationIds: [ids[3]!, ids[4]!], site: code, priority: 50 }, artist);
    await ss.requestSync({ representationIds: [ids[5]!], site: other, priority: 100 }, artist);
    const first = (await claim({ site: code, agent: 'agent-1', limit: 3, leaseSeconds: 60 }, artist)).items;
    expect(first.map((c) => c.state!.representationId)).toEqual([ids[2], ids[3], ids[4]]);
    for (const c of first) {
      expect(c.lease).toMatch(/^ssl_[A-Za-z0-9_-]{43}$/);
      expect(c.state).toMatchObject({ status: 'in_progress', agent: 'agent-1', site: code });
    }
    expect(new Set(first.map((c) => c.lease)).size).toBe(3);
    const rest = (await claim({ site: code, agent: 'agent-2' }, artist)).items;
    expect(rest.map((c) => c.state!.representationId)).toEqual([ids[0], ids[1]]);
    expect((await claim({ site: code, agent: 'agent-3' }, artist)).items).toEqual([]);
    // Leases are kept only as digests.
    const stored = await sql.query('select lease_hash from records.sitesync_state where site = $1 and lease_hash is not null', [code]);
    for (const row of stored.rows) expect((row.lease_hash as Buffer).length).toBe(32);
    expect(stored.rows.map((r) => (r.lease_hash as Buffer).toString())).not.toContain(first[0]!.lease);
    const unknown = await appErrorOf(claim({ site: 'nowhere', agent: 'x' }, artist));
    expect(unknown.problems?.[0]?.loc).toEqual(['site']);
    expect((await appErrorOf(claim({ site: code, agent: 'x' }, viewer))).kind).toBe('forbidden');
    const bad = await appErrorOf(claim({ site: code, agent: '', limit: 101, leaseSeconds: 5 }, artist));
    expect(bad.problems?.map((p) => p.loc)).toEqual([['agent'], ['limit'], ['lease_seconds']]);
  });

  it('gives every state to exactly one of many concurrent claimers', async () => {
    const code = await site();
    const ids: string[] = [];
    const rows = 2000;
    for (let i = 0; i < rows; i++) ids.push(newId());
    // Representations written in bulk (the claim does not read them).
    await sql.query(
      `insert into records.sitesync_state (representation_id, site, project_id, status, priority)
       select id, $2, $3, 'queued', 50 from unnest($1::uuid[]) id`,
      [ids, code, projectId],
    );
    const seen = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 16 }, async (_, a) => {
        for (;;) {
          const got = (await claim({ site: code, agent: `agent-${a}`, limit: 25 }, artist)).items;
          if (got.length === 0) return;
          for (const c of got) seen.set(c.state!.representationId, (seen.get(c.state!.representationId) ?? 0) + 1);
        }
      }),
    );
    expect(seen.size).toBe(rows);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 60_000);
});

describe('reports and leases', () => {
  async function claimOne(agent = 'agent') {
    const code = await site();
    const [rep] = await reps(1);
    await ss.requestSync({ representationIds: [rep!], site: code }, artist);
    const [c] = (await claim({ site: code, agent, leaseSeconds: 30 }, artist)).items;
    return { code, rep: rep!, lease: c!.lease, claimed: c!.state! };
  }

  it('in_progress extends the lease and writes no event; synced ends it', async () => {
    const { code, rep, lease } = await claimOne();
    await sql.query(`update records.sitesync_state set lease_expires_at = clock_timestamp() + interval '2 seconds' where representation_id = $1`, [rep]);
    const before = (await state(rep, code)).lease_expires_at as Date;
    const p = (await ss.reportState({ representationId: rep, site: code, lease, status: 'in_progress', progress: 0.5, size: 10, totalSize: 20 }, artist))
      .state!;
    expect(p).toMatchObject({ status: 'in_progress', progress: 0.5, size: 10, totalSize: 20 });
    expect(((await state(rep, code)).lease_expires_at as Date).getTime()).toBeGreaterThan(before.getTime() + 20_000);
    const done = (await ss.reportState({ representationId: rep, site: code, lease, status: 'synced', size: 20 }, artist)).state!;
    expect(done).toMatchObject({ status: 'synced', progress: 1, size: 20 });
    expect(done.leaseExpiresAt).toBeUndefined();
    const again = await appErrorOf(ss.reportState({ representationId: rep, site: code, lease, status: 'in_progress' }, artist));
    expect(again).toMatchObject({ kind: 'conflict', code: 'lease_lost' });
    const ev = await syncEvents(rep, 3);
    expect(ev.map((e) => e.payload.changes.status)).toEqual(['queued', 'in_progress', 'synced']);
  });

  it('failed queues it again with an attempt; the 5th failed attempt leaves it failed', async () => {
    const { code, rep } = await claimOne();
    let lease: string;
    await sql.query(`update records.sitesync_state set status = 'queued', lease_hash = null, lease_expires_at = null where representation_id = $1`, [rep]);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const [c] = (await claim({ site: code, agent: 'a' }, artist)).items;
      lease = c!.lease;
      const s = (await ss.reportState({ representationId: rep, site: code, lease, status: 'failed', error: `disk full ${attempt}` }, artist)).state!;
      expect(s).toMatchObject({ attempts: attempt, status: attempt < 5 ? 'queued' : 'failed', error: `disk full ${attempt}` });
    }
    expect((await claim({ site: code, agent: 'a' }, artist)).items).toEqual([]);
  });

  it('a wrong or run-out lease is 409 lease_lost; a run-out one counts an attempt (queued again), the 5th leaves it failed', async () => {
    const { code, rep, lease } = await claimOne();
    expect(await appErrorOf(ss.reportState({ representationId: rep, site: code, lease: `ssl_${'A'.repeat(43)}`, status: 'synced' }, artist))).toMatchObject({
      code: 'lease_lost',
    });
    expect(await appErrorOf(ss.reportState({ representationId: rep, site: code, lease: 'garbage', status: 'synced' }, artist))).toMatchObject({
      code: 'lease_lost',
    });
    expect((await appErrorOf(ss.reportState({ representationId: newId(), site: code, lease, status: 'synced' }, artist))).kind).toBe('not_found');
    await expire(rep, code);
    expect(await appErrorOf(ss.reportState({ representationId: rep, site: code, lease, status: 'synced' }, artist))).toMatchObject({ code: 'lease_lost' });
    expect(await state(rep, code)).toMatchObject({ status: 'queued', attempts: 1, lease_expires_at: null });

    // Lapses at claims: a run-out lease is claimed again at once, counting the attempt.
    for (let attempt = 2; attempt <= 4; attempt++) {
      const c = await claimDue(code, `a${attempt}`);
      expect(c.state!.attempts).toBe(attempt - 1);
      await expire(rep, code);
    }
    const again = await claimDue(code, 'a5');
    expect(again!.state).toMatchObject({ attempts: 4, agent: 'a5' });
    await expire(rep, code);
    expect((await claim({ site: code, agent: 'a6' }, artist)).items).toEqual([]);
    // The claim lapsed it, or skipped it because the sweeper held it at that moment and is committing the lapse.
    await expect.poll(async () => (await state(rep, code)).status, { timeout: 5000 }).toBe('failed');
    expect(await state(rep, code)).toMatchObject({ status: 'failed', attempts: 5, lease_expires_at: null });
    const events = await syncEvents(rep, 11);
    // A lapse names the agent whose lease ran out, whether a claim, a report or the sweeper found it.
    expect(events.map((e) => e.payload.changes.agent)).toEqual([null, 'agent', 'agent', 'a2', 'a2', 'a3', 'a3', 'a4', 'a4', 'a5', 'a5']);
    expect(events.map((e) => e.payload.changes.status)).toEqual([
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'failed',
    ]);
  });

  it('the sweeper returns run-out leases to the queue without waiting for a claim', async () => {
    const { code, rep } = await claimOne();
    await expire(rep, code);
    await expect.poll(async () => (await state(rep, code)).status, { timeout: 5000 }).toBe('queued');
    expect((await state(rep, code)).attempts).toBe(1);
    const last = (await syncEvents(rep, 3)).at(-1)!;
    expect(last.payload).toMatchObject({ actor: null, changes: { status: 'queued', attempts: 1 } });
  });

  it('PATCH pauses, queues again or removes, ending a held lease; paused only from queued or in_progress', async () => {
    const { code, rep, lease } = await claimOne();
    const paused = (await ss.updateState({ representationId: rep, site: code, status: 'paused', priority: 80 }, artist)).state!;
    expect(paused).toMatchObject({ status: 'paused', priority: 80 });
    expect(await appErrorOf(ss.reportState({ representationId: rep, site: code, lease, status: 'in_progress' }, artist))).toMatchObject({ code: 'lease_lost' });
    expect((await claim({ site: code, agent: 'b' }, artist)).items).toEqual([]);
    expect((await ss.updateState({ representationId: rep, site: code, status: 'queued' }, artist)).state!.status).toBe('queued');
    const [c] = (await claim({ site: code, agent: 'b' }, artist)).items;
    expect(c!.state!.priority).toBe(80);
    await ss.updateState({ representationId: rep, site: code, status: 'removed' }, artist);
    expect(await appErrorOf(ss.reportState({ representationId: rep, site: code, lease: c!.lease, status: 'synced' }, artist))).toMatchObject({
      code: 'lease_lost',
    });
    expect(await appErrorOf(ss.updateState({ representationId: rep, site: code, status: 'paused' }, artist))).toMatchObject({ code: 'transition_not_allowed' });
    expect((await appErrorOf(ss.updateState({ representationId: rep, site: code, status: 'synced' }, artist))).kind).toBe('invalid');
    expect((await appErrorOf(ss.updateState({ representationId: newId(), site: code, status: 'queued' }, artist))).kind).toBe('not_found');
    expect((await appErrorOf(ss.updateState({ representationId: rep, site: code, status: 'queued' }, viewer))).kind).toBe('forbidden');
    // The same status and priority again: no change, no event.
    await ss.updateState({ representationId: rep, site: code, status: 'removed' }, artist);
    const statuses = (await syncEvents(rep, 6)).map((e) => e.payload.changes.status);
    expect(statuses).toEqual(['queued', 'in_progress', 'paused', 'queued', 'in_progress', 'removed']);
  });
});

describe('pages and summary', () => {
  it('filters by project, site, status and representation, pages with an opaque cursor, counts by status', async () => {
    const code = await site();
    const other = await site();
    const p2 = (await records.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'Two', code: 'two' }) }, admin)).record!.id;
    const a = await reps(5);
    const b = await reps(2, p2);
    await ss.requestSync({ representationIds: [...a, ...b], site: code }, artist);
    await ss.requestSync({ representationIds: a.slice(0, 2), site: other }, artist);
    await claim({ site: code, agent: 'x', limit: 1 }, artist);

    const all: sitesyncv1.SiteState[] = [];
    let cursor: string | undefined;
    do {
      const page = await ss.listStates({ site: code, limit: 3, cursor }, viewer);
      expect(page.items.length).toBeLessThanOrEqual(3);
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    expect(all.map((s) => s.representationId)).toEqual([...a, ...b].sort());
    expect((await ss.listStates({ projectId: p2, limit: 10 }, viewer)).items.map((s) => s.representationId)).toEqual([...b].sort());
    expect((await ss.listStates({ representationId: a[0], limit: 10 }, viewer)).items.map((s) => s.site).sort()).toEqual([code, other].sort());
    expect((await ss.listStates({ site: code, status: 'in_progress', limit: 10 }, viewer)).items.length).toBe(1);
    expect((await appErrorOf(ss.listStates({ cursor: 'nope', limit: 10 }, viewer))).problems?.[0]?.loc).toEqual(['cursor']);

    const counts = Object.fromEntries((await ss.summarizeStates({ site: code }, viewer)).counts.map((c) => [c.status, c.count]));
    expect(counts).toEqual({ queued: 6, in_progress: 1, synced: 0, failed: 0, paused: 0, removed: 0 });
    const byProject = Object.fromEntries((await ss.summarizeStates({ projectId: p2 }, viewer)).counts.map((c) => [c.status, c.count]));
    expect(byProject.queued! + byProject.in_progress!).toBe(2);
  });
});

describe('plans', () => {
  it('the claim and the pages are answered from their indexes', async () => {
    const code = await site();
    await sql.query(
      `insert into records.sitesync_state (representation_id, site, project_id, status, priority)
       select gen_random_uuid(), $1, $2, case when i % 10 = 0 then 'queued' else 'synced' end, i % 100 from generate_series(1, 20000) i`,
      [code, projectId],
    );
    await sql.query('analyze records.sitesync_state');
    const plan = async (text: string, params: unknown[]) => {
      await sql.query('begin');
      try {
        const res = await sql.query(`explain (format json) ${text}`, params);
        return JSON.stringify(res.rows[0]['QUERY PLAN']);
      } finally {
        await sql.query('rollback');
      }
    };
    const claim = await plan(claimSql(null), [code, 10, 5, 'x', [], 300, 'lapsed']);
    expect(claim).toContain('sitesync_state_claim_idx');
    expect(claim).toContain('sitesync_state_lease_idx');
    const bySite = pageSql({ site: code }, { representationId: newId(), site: code });
    const sitePage = await plan(
      bySite.sql,
      bySite.params.map((p, i) => (i === bySite.params.length - 1 ? 100 : p)),
    );
    // Either index answers a page after a cursor in key order (the planner picks by the rows other
    // specs left in the table): never a scan of the table or a sort.
    expect(sitePage).toMatch(/sitesync_state_site_idx|sitesync_state_pkey/);
    expect(sitePage).not.toContain('Seq Scan');
    expect(sitePage).not.toContain('"Sort"');
    const byProject = pageSql({ projectId }, undefined);
    expect(await plan(byProject.sql, [projectId, 100])).toContain('sitesync_state_project_idx');
  });
});
