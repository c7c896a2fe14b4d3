/**
 * The farm against the real PostgreSQL through the records service's gRPC FarmService: frames
 * cut into chunks, the claim order and statement, leases (heartbeat, expiry moved by SQL,
 * lease_lost), attempts and final failure, dependencies, job changes and their roles, tracked
 * jobs, derived counters, and the FarmJob events each change publishes (none for heartbeats).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, natsNames, newId, type CallContext, type GrpcClient, type Role, type StreamEvent } from '@reelbase/lib-platform';
import { appErrorOf, TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import { farmv1, type recordsv1 } from '@reelbase/proto';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';
import { FarmService } from '../src/farm/domain/farm.service.js';
import { CHUNK_FIXED_BYTES, CHUNK_PAGE_BYTES, LIMITS } from '../src/farm/domain/farm.rules.js';
import { FarmRepository, openFarmPool } from '../src/farm/store/farm.repository.js';
import { claimStatement } from '../src/farm/store/farm.statements.js';

const as = (role: Role, userId: string = newId()): CallContext => ({ requestId: `r-${role}`, principal: { userId, role, authKind: 'token' } });
const admin = as('Admin');
const artistId = newId();
const artist = as('Artist', artistId);

let world: RecordsWorld;
let farm: GrpcClient<farmv1.FarmServiceClient>;
let stream: StreamReader;
let projectId: string;

beforeAll(async () => {
  world = await startRecordsWorld('farm', { OUTBOX_POLL_MS: '100', FARM_SWEEP_MS: '600000' });
  farm = createGrpcClient(farmv1.FarmServiceClient, farmv1.FarmServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'farm',
    address: `127.0.0.1:${world.running.grpcPort}`,
  });
  stream = await StreamReader.open(world.prefix);
  const p = await world.client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'Farm', code: 'farm' }) }, admin);
  projectId = p.record!.id;
});

afterAll(async () => {
  farm?.close();
  await world?.stop();
});

const data = (r: recordsv1.Record | undefined) => JSON.parse(r!.dataJson) as Record<string, unknown>;

async function job(body: Partial<farmv1.CreateJobRequest> = {}, ctx: CallContext = admin): Promise<recordsv1.Record> {
  return (await farm.call.createJob({ projectId, name: 'job', kind: 'render', dependsOn: [], ...body }, ctx)).job!;
}

const claim = (pool: string, body: Partial<farmv1.ClaimRequest> = {}, ctx: CallContext = artist) =>
  farm.call.claim({ pool, worker: 'w1', kinds: [], ...body }, ctx);

/** Moves a chunk's lease into the past: the database's clock decides expiry. */
const expire = (chunkId: string) =>
  world.sql.query(`update records.farm_chunk set lease_expires_at = clock_timestamp() - interval '1 second' where id = $1`, [chunkId]);

/** The published events about `jobId` once `count` of them are there (or after 5 s). */
async function eventsOfJob(jobId: string, count: number): Promise<StreamEvent[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const evs = await stream.about(jobId);
    if (evs.length >= count || Date.now() > deadline) return evs.map((e) => e.payload);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function eventsOf(jobId: string, count: number): Promise<Record<string, unknown>[]> {
  return (await eventsOfJob(jobId, count)).map((e) => ({ action: e.action, ...e.changes }));
}

describe('jobs and chunks', () => {
  it('cuts frames into chunks written compactly; without frames one chunk; bounds are 422s naming the field', async () => {
    const j = await job({ frames: '1001-1100', chunkSize: 10, pool: 'cut' });
    expect(j.status).toBe('queued');
    expect(data(j)).toMatchObject({ chunks_total: 10, chunks_done: 0, chunks_failed: 0, progress: 0, pool: 'cut', priority: 50, max_attempts: 3 });
    const chunks = (await farm.call.listChunks({ jobId: j.id }, admin)).chunks;
    expect(chunks.map((c) => c.frames)).toEqual(Array.from({ length: 10 }, (_, i) => `${1001 + 10 * i}-${1010 + 10 * i}`));
    expect(chunks.map((c) => c.index)).toEqual([...Array(10).keys()]);

    const stepped = await job({ frames: '1-10,20-40x2', chunkSize: 10, pool: 'cut' });
    expect((await farm.call.listChunks({ jobId: stepped.id }, admin)).chunks.map((c) => c.frames)).toEqual(['1-10', '20,22,24,26,28,30,32,34,36,38', '40']);
    const single = await job({ pool: 'cut' });
    expect((await farm.call.listChunks({ jobId: single.id }, admin)).chunks.map((c) => c.frames ?? null)).toEqual([null]);

    const bad = await appErrorOf(
      farm.call.createJob({ projectId, name: '', kind: 'render', frames: '10-1', chunkSize: 0, priority: 101, maxAttempts: 11, dependsOn: ['x'] }, admin),
    );
    expect(bad.kind).toBe('invalid');
    expect(bad.problems.map((p) => p.loc.join('.')).sort()).toEqual(['chunk_size', 'depends_on.0', 'max_attempts', 'name', 'priority']);
    for (const frames of ['10-1', '1-5,3', 'a-b', '1-10x0', '']) {
      expect(
        (await appErrorOf(job({ frames }))).problems.map((p) => p.loc[0]),
        frames,
      ).toEqual(['frames']);
    }
    expect((await appErrorOf(job({ dependsOn: [projectId] }))).problems).toMatchObject([{ loc: ['depends_on', 0], type: 'link_not_found' }]);
    expect((await appErrorOf(job({}, as('Viewer')))).kind).toBe('forbidden');
  });
});

describe('chunk pages and bounds', () => {
  /** The largest output a chunk keeps: exactly 64 KiB of compact JSON. */
  const largest = JSON.stringify({ log: 'x'.repeat(LIMITS.outputBytes - 10) });

  it('a job lists at most 100,000 frames in at most 10,000 chunks; an output is at most 64 KiB: 422s naming the field', async () => {
    for (const [frames, chunkSize] of [
      ['1-1000000', 10],
      ['1-10001', 1],
    ] as const) {
      expect((await appErrorOf(job({ pool: 'bounds', frames, chunkSize }))).problems).toMatchObject([{ loc: ['frames'], type: 'frames' }]);
    }
    expect(data(await job({ pool: 'bounds', frames: '1-100000', chunkSize: 10 })).chunks_total).toBe(10_000);
    const small = await job({ pool: 'bounds-out', frames: '1-2', chunkSize: 1 });
    const a = await claim('bounds-out');
    const over = JSON.stringify({ log: 'x'.repeat(LIMITS.outputBytes - 9) });
    expect((await appErrorOf(farm.call.completeChunk({ chunkId: a.chunk!.id, lease: a.lease!, outputJson: over }, artist))).problems).toMatchObject([
      { loc: ['output'], type: 'too_large' },
    ]);
    // Measured compact: white space sent around it does not count, and is not kept.
    const done = await farm.call.completeChunk({ chunkId: a.chunk!.id, lease: a.lease!, outputJson: ` ${largest.replace(':', ' : ')} ` }, artist);
    expect(done.chunk!.outputJson).toBe(largest);
    expect((await farm.call.listChunks({ jobId: small.id }, admin)).chunks[0]!.outputJson).toBe(largest);
  });

  it('pages in index order by limit and by size: chunks of the largest frames, errors, workers and outputs never make a page past the gRPC limit', async () => {
    const count = 300;
    const j = await job({ pool: 'pages', frames: `1-${count}`, chunkSize: 1 });
    // Every chunk as large as the API lets it be: 10,000 nine-digit frames, a 10,000-character
    // error and a 200-character worker of three-byte characters, a 64 KiB output.
    const frames = Array.from({ length: 10_000 }, (_, i) => 100_000_000 - 2 * i).join(',');
    await world.sql.query(`update records.farm_chunk set state = 'done', frames = $2, error = $3, worker = $4, output = $5::json where job_id = $1`, [
      j.id,
      frames,
      '€'.repeat(LIMITS.error),
      '€'.repeat(LIMITS.text),
      largest,
    ]);
    const chunkBytes = 100_000 + 3 * LIMITS.error + 3 * LIMITS.text + LIMITS.outputBytes + CHUNK_FIXED_BYTES;
    const seen: farmv1.FarmChunk[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await farm.call.listChunks({ jobId: j.id, limit: 500, cursor }, admin);
      const bytes = farmv1.ListChunksResponse.encode(page).finish().length;
      expect(bytes).toBeLessThanOrEqual(CHUNK_PAGE_BYTES + chunkBytes);
      expect(page.chunks.length).toBeGreaterThan(0);
      seen.push(...page.chunks);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBeGreaterThan(10);
    expect(seen.map((c) => c.index)).toEqual([...Array(count).keys()]);
    expect(seen.every((c) => c.outputJson === largest && c.frames === frames && c.error!.length === LIMITS.error)).toBe(true);

    // Small chunks: `limit` decides, then the last page has no cursor.
    const many = await job({ pool: 'pages', frames: '1-1200', chunkSize: 1 });
    const first = await farm.call.listChunks({ jobId: many.id, limit: 500 }, admin);
    expect(first.chunks.map((c) => c.index)).toEqual([...Array(500).keys()]);
    const second = await farm.call.listChunks({ jobId: many.id, limit: 500, cursor: first.nextCursor }, admin);
    const third = await farm.call.listChunks({ jobId: many.id, limit: 500, cursor: second.nextCursor }, admin);
    expect([second.chunks[0]!.index, third.chunks.length, third.nextCursor]).toEqual([500, 200, undefined]);
    expect((await farm.call.listChunks({ jobId: many.id }, admin)).chunks).toHaveLength(100);
    const bad = await appErrorOf(farm.call.listChunks({ jobId: many.id, limit: 501, cursor: 'nope' }, admin));
    expect(bad.problems.map((p) => p.loc)).toEqual([['limit'], ['cursor']]);
  }, 60_000);
});

describe('the claim', () => {
  it('hands out by priority, then oldest job, then lowest index; kinds filter; nothing due is empty', async () => {
    const low = await job({ pool: 'order', priority: 10, frames: '1-2', chunkSize: 1 });
    const oldHigh = await job({ pool: 'order', priority: 90, frames: '1-2', chunkSize: 1 });
    const newHigh = await job({ pool: 'order', priority: 90, frames: '1-1', chunkSize: 1, kind: 'sim' });
    const got: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await claim('order');
      got.push(`${c.job!.id === low.id ? 'low' : c.job!.id === oldHigh.id ? 'oldHigh' : 'newHigh'}:${c.chunk!.index}`);
      expect(c.lease).toMatch(/^lease_[A-Za-z0-9_-]{32}$/);
      expect(c.chunk!.attempt).toBe(1);
    }
    expect(got).toEqual(['oldHigh:0', 'oldHigh:1', 'newHigh:0', 'low:0', 'low:1']);
    expect(await claim('order')).toEqual({});
    const sim = await job({ pool: 'kinds', kind: 'sim' });
    expect(await claim('kinds', { kinds: ['render'] })).toEqual({});
    expect((await claim('kinds', { kinds: ['render', 'sim'] })).job!.id).toBe(sim.id);
    expect((await appErrorOf(claim('order', {}, as('Viewer')))).kind).toBe('forbidden');
    expect((await appErrorOf(claim('order', { leaseSeconds: 5 }))).problems[0]!.loc).toEqual(['lease_seconds']);
  });

  it("a lease that ran out takes its place in the claim order among queued chunks, and another kind's does not", async () => {
    const low = await job({ pool: 'lapse-order', priority: 10, frames: '1-3', chunkSize: 1 });
    const c0 = await claim('lapse-order');
    const c1 = await claim('lapse-order');
    expect([c0.chunk!.index, c1.chunk!.index]).toEqual([0, 1]);
    await expire(c1.chunk!.id);
    await expire(c0.chunk!.id);
    // Lapsed 0 and 1 come before queued 2 of the same job.
    const again = [await claim('lapse-order'), await claim('lapse-order')];
    expect(again.map((c) => [c.chunk!.index, c.chunk!.attempt])).toEqual([
      [0, 2],
      [1, 2],
    ]);
    // A higher-priority job's queued chunk comes before a lapsed chunk of the lower one.
    const high = await job({ pool: 'lapse-order', priority: 90, frames: '1-1', chunkSize: 1, kind: 'sim' });
    await expire(again[0]!.chunk!.id);
    const first = await claim('lapse-order');
    expect([first.job!.id, first.chunk!.index]).toEqual([high.id, 0]);
    // A kinds filter applies to lapsed chunks as well.
    const sim = await job({ pool: 'lapse-order', priority: 90, frames: '1-1', chunkSize: 1, kind: 'sim' });
    const simClaim = await claim('lapse-order', { kinds: ['sim'] });
    expect(simClaim.job!.id).toBe(sim.id);
    expect(await claim('lapse-order', { kinds: ['sim'] })).toEqual({});
    const next = await claim('lapse-order', { kinds: ['render'] });
    expect([next.job!.id, next.chunk!.index, next.chunk!.attempt]).toEqual([low.id, 0, 3]);
  });

  it('leases: heartbeat extends, a wrong or expired lease is lease_lost, an expired chunk is claimed again with an attempt counted', async () => {
    const j = await job({ pool: 'lease', frames: '1-1', chunkSize: 1 });
    const first = await claim('lease', { leaseSeconds: 60 });
    const chunkId = first.chunk!.id;
    const before = Date.parse(first.chunk!.leaseExpiresAt!);
    await new Promise((r) => setTimeout(r, 20));
    const hb = await farm.call.heartbeat({ chunkId, lease: first.lease!, progress: 40 }, artist);
    expect(Date.parse(hb.chunk!.leaseExpiresAt!)).toBeGreaterThan(before);
    expect(hb.chunk!.progress).toBe(40);
    expect((await appErrorOf(farm.call.heartbeat({ chunkId, lease: 'lease_wrong' }, artist))).code).toBe('lease_lost');
    expect((await appErrorOf(farm.call.completeChunk({ chunkId: newId(), lease: first.lease! }, artist))).kind).toBe('not_found');

    await expire(chunkId);
    expect((await appErrorOf(farm.call.heartbeat({ chunkId, lease: first.lease! }, artist))).code).toBe('lease_lost');
    const again = await claim('lease');
    expect(again.chunk!.id).toBe(chunkId);
    expect(again.chunk!.attempt).toBe(2);
    expect((await appErrorOf(farm.call.completeChunk({ chunkId, lease: first.lease! }, artist))).code).toBe('lease_lost');
    const done = await farm.call.completeChunk({ chunkId, lease: again.lease!, outputJson: '{"files":1}' }, as('Viewer', newId())).catch((e: unknown) => e);
    expect(done).toBeInstanceOf(Error);
    const ok = await farm.call.completeChunk({ chunkId, lease: again.lease!, outputJson: '{"files":1}' }, as('Artist'));
    expect(ok.job!.status).toBe('done');
    expect(data(ok.job)).toMatchObject({ chunks_done: 1, progress: 100, attempts_failed: 1 });
    // create, running (first claim), the expired attempt, done; no event for the heartbeat.
    const evs = await eventsOf(j.id, 4);
    expect(evs).toEqual([
      expect.objectContaining({ action: 'create', status: 'queued' }),
      { action: 'update', status: 'running' },
      { action: 'update', attempts_failed: 1 },
      { action: 'update', status: 'done', chunks_done: 1, progress: 100 },
    ]);
  });

  it('fails a chunk after max_attempts: the job fails, its other queued chunks are no longer offered; an expired last attempt is failed by the claim', async () => {
    const j = await job({ pool: 'attempts', frames: '1-3', chunkSize: 1, maxAttempts: 2 });
    const a = await claim('attempts');
    const b = await claim('attempts');
    expect((await farm.call.failChunk({ chunkId: a.chunk!.id, lease: a.lease!, error: 'boom' }, artist)).chunk!.state).toBe('queued');
    const a2 = await claim('attempts');
    expect(a2.chunk!.id).toBe(a.chunk!.id);
    expect(a2.chunk!.attempt).toBe(2);
    const last = await farm.call.failChunk({ chunkId: a.chunk!.id, lease: a2.lease!, error: 'boom again' }, artist);
    expect(last.chunk!.state).toBe('failed');
    expect(last.job!.status).toBe('failed');
    expect(data(last.job)).toMatchObject({ chunks_failed: 1, attempts_failed: 2 });
    expect(await claim('attempts')).toEqual({});
    // A chunk already held may still complete.
    expect((await farm.call.completeChunk({ chunkId: b.chunk!.id, lease: b.lease! }, artist)).job!.status).toBe('failed');

    const k = await job({ pool: 'burn', frames: '1-2', chunkSize: 1, maxAttempts: 1 });
    const held = await claim('burn');
    await expire(held.chunk!.id);
    // The expired chunk's only attempt is used up: the claim fails it and the job, and hands out nothing.
    expect(await claim('burn')).toEqual({});
    const after = (await farm.call.listChunks({ jobId: k.id }, admin)).chunks;
    expect(after.map((c) => c.state)).toEqual(['failed', 'queued']);
    expect((await world.sql.query('select status from records.record where id = $1', [k.id])).rows[0].status).toBe('failed');
    expect(j.id).toBeTruthy();
  });

  it('the sweeper finalises expired leases without a claim: re-queued with an attempt counted, or failed with its job', async () => {
    const pool = openFarmPool({ databaseUrl: world.db.url, max: 2 });
    const sweeper = new FarmService({ store: new FarmRepository(pool, natsNames(world.prefix)), committed: () => {} });
    try {
      const requeue = await job({ pool: 'sweep', frames: '1-1', chunkSize: 1, maxAttempts: 2 });
      const burn = await job({ pool: 'sweep', frames: '1-1', chunkSize: 1, maxAttempts: 1 });
      const a = await claim('sweep');
      const b = await claim('sweep');
      await expire(a.chunk!.id);
      await expire(b.chunk!.id);
      expect(await sweeper.expireLeases(100)).toBe(2);
      expect(await sweeper.expireLeases(100)).toBe(0);
      const states = async (id: string) => (await farm.call.listChunks({ jobId: id }, admin)).chunks.map((c) => c.state);
      expect(await states(requeue.id)).toEqual(['queued']);
      expect(await states(burn.id)).toEqual(['failed']);
      const status = async (id: string) => (await world.sql.query('select status, data from records.record where id = $1', [id])).rows[0];
      expect(await status(requeue.id)).toMatchObject({ status: 'running', data: expect.objectContaining({ attempts_failed: 1 }) });
      expect(await status(burn.id)).toMatchObject({ status: 'failed', data: expect.objectContaining({ chunks_failed: 1 }) });
      expect((await appErrorOf(farm.call.completeChunk({ chunkId: a.chunk!.id, lease: a.lease! }, artist))).code).toBe('lease_lost');
      expect((await claim('sweep')).chunk!.attempt).toBe(2);
    } finally {
      await pool.destroy();
    }
  });
});

describe('the events of farm commits', () => {
  it('hands each event a farm statement wrote to the service bus, the very events the relay publishes', async () => {
    const pool = openFarmPool({ databaseUrl: world.db.url, max: 2 });
    const committed: StreamEvent[] = [];
    const local = new FarmService({ store: new FarmRepository(pool, natsNames(world.prefix)), committed: (e) => committed.push(e) });
    try {
      const j = await job({ pool: 'bus', frames: '1-3', chunkSize: 1, maxAttempts: 2 });
      const first = (await local.claim({ pool: 'bus', worker: 'w1', kinds: [] }, artist))!;
      await local.complete(first.chunk.id, first.lease, undefined, artist);
      await local.change(j.id, 'pause', admin);
      await local.change(j.id, 'resume', admin);
      const second = (await local.claim({ pool: 'bus', worker: 'w1', kinds: [] }, artist))!;
      await local.fail(second.chunk.id, second.lease, 'boom', artist);
      const third = (await local.claim({ pool: 'bus', worker: 'w1', kinds: [] }, artist))!;
      await local.heartbeat(third.chunk.id, third.lease, 50, artist);
      await expire(third.chunk.id);
      expect(await local.expireLeases(10)).toBe(1);

      // The first claim, the complete, pause, resume, the fail and the expiry wrote events; the
      // later claims and the heartbeat did not.
      expect(committed).toHaveLength(6);
      const published = (await eventsOfJob(j.id, 7)).slice(1);
      expect(committed.map((e) => e.event_id)).toEqual(published.map((e) => e.event_id));
      expect(committed.map((e) => ({ action: e.action, changes: e.changes, occurred_at: e.occurred_at }))).toEqual(
        published.map((e) => ({ action: e.action, changes: e.changes, occurred_at: e.occurred_at })),
      );
    } finally {
      await pool.destroy();
    }
  });
});

describe('dependencies, changes and tracked jobs', () => {
  it('offers a job once every dependency is done', async () => {
    const dep = await job({ pool: 'deps', frames: '1-1', chunkSize: 1, priority: 10 });
    const child = await job({ pool: 'deps', frames: '1-1', chunkSize: 1, priority: 100, dependsOn: [dep.id] });
    const c = await claim('deps');
    expect(c.job!.id).toBe(dep.id);
    expect(await claim('deps')).toEqual({});
    await farm.call.completeChunk({ chunkId: c.chunk!.id, lease: c.lease! }, artist);
    expect((await claim('deps')).job!.id).toBe(child.id);
  });

  it('pause, resume, cancel and retry: roles, transitions, lease_lost after cancel', async () => {
    const j = await job({ pool: 'chg', frames: '1-3', chunkSize: 1, maxAttempts: 1 }, artist);
    const other = as('Artist');
    expect((await appErrorOf(farm.call.changeJob({ jobId: j.id, action: 'pause' }, other))).kind).toBe('forbidden');
    expect((await farm.call.changeJob({ jobId: j.id, action: 'pause' }, artist)).job!.status).toBe('paused');
    expect(await claim('chg')).toEqual({});
    expect((await appErrorOf(farm.call.changeJob({ jobId: j.id, action: 'pause' }, artist))).code).toBe('transition_not_allowed');
    expect((await farm.call.changeJob({ jobId: j.id, action: 'resume' }, as('Coordinator'))).job!.status).toBe('queued');
    const c = await claim('chg');
    await farm.call.failChunk({ chunkId: c.chunk!.id, lease: c.lease!, error: 'x' }, artist);
    const retried = await farm.call.changeJob({ jobId: j.id, action: 'retry' }, as('Supervisor'));
    expect(retried.job!.status).toBe('running');
    expect(data(retried.job).chunks_failed).toBe(0);
    const held = await claim('chg');
    expect(held.chunk!.attempt).toBe(1);
    await farm.call.changeJob({ jobId: j.id, action: 'cancel' }, admin);
    expect((await appErrorOf(farm.call.completeChunk({ chunkId: held.chunk!.id, lease: held.lease! }, artist))).code).toBe('lease_lost');
    expect(await claim('chg')).toEqual({});
    expect((await appErrorOf(farm.call.changeJob({ jobId: newId(), action: 'pause' }, admin))).kind).toBe('not_found');
  });

  it('a tracked job is never offered and takes reports; a job without a manager is not_tracked', async () => {
    const t = await job({ pool: 'tracked', manager: 'deadline', externalId: 'dl-42', frames: '1-10' });
    expect(await claim('tracked')).toEqual({});
    const r = await farm.call.reportJob({ jobId: t.id, status: 'running', progress: 30, chunksDone: 3 }, admin);
    expect(r.job!.status).toBe('running');
    expect(data(r.job)).toMatchObject({ progress: 30, chunks_done: 3, external_id: 'dl-42' });
    const plain = await job({ pool: 'tracked' });
    expect((await appErrorOf(farm.call.reportJob({ jobId: plain.id, progress: 1 }, admin))).code).toBe('not_tracked');
    const evs = await eventsOf(t.id, 2);
    expect(evs[1]).toEqual({ action: 'update', status: 'running', progress: 30, chunks_done: 3 });
  });

  it('the generic record routes refuse FarmJob creates and farm-owned fields; a running job is not retired', async () => {
    const j = await job({ pool: 'generic' });
    const c = world.client.call;
    expect((await appErrorOf(c.createRecord({ entityType: 'FarmJob', projectId, dataJson: '{"name":"x"}' }, admin))).kind).toBe('forbidden');
    expect((await appErrorOf(c.updateRecord({ entityType: 'FarmJob', id: j.id, status: { value: 'done' } }, admin))).kind).toBe('forbidden');
    expect((await appErrorOf(c.updateRecord({ entityType: 'FarmJob', id: j.id, dataJson: '{"chunks_done":5}' }, admin))).kind).toBe('forbidden');
    expect((await c.updateRecord({ entityType: 'FarmJob', id: j.id, dataJson: '{"name":"renamed"}' }, admin)).record!.status).toBe('queued');
    expect((await appErrorOf(c.retireRecord({ entityType: 'FarmJob', id: j.id }, admin))).code).toBe('job_active');
  });
});

describe('contention', () => {
  it('2,000 chunks claimed by 32 concurrent agents: each is handed out and completed exactly once', async () => {
    const jobs = await Promise.all([0, 1, 2, 3].map((i) => job({ pool: 'race', frames: '1-500', chunkSize: 1, priority: 10 * i })));
    const handed = new Map<string, number>();
    let completed = 0;
    const agent = async (n: number) => {
      const ctx = as('Artist');
      for (;;) {
        const c = await farm.call.claim({ pool: 'race', worker: `agent-${n}`, kinds: [], leaseSeconds: 60 }, ctx);
        if (!c.chunk) return;
        handed.set(c.chunk.id, (handed.get(c.chunk.id) ?? 0) + 1);
        await farm.call.completeChunk({ chunkId: c.chunk.id, lease: c.lease! }, ctx);
        completed += 1;
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, n) => agent(n)));
    expect(handed.size).toBe(2000);
    expect([...handed.values()].every((n) => n === 1)).toBe(true);
    expect(completed).toBe(2000);
    const res = await world.sql.query(
      `select count(*) filter (where c.state = 'done')::int as done, count(*) filter (where c.claims <> 1)::int as reclaimed
         from records.farm_chunk c where c.job_id = any($1::uuid[])`,
      [jobs.map((j) => j.id)],
    );
    expect(res.rows[0]).toEqual({ done: 2000, reclaimed: 0 });
    const statuses = await world.sql.query(`select status, data->>'chunks_done' as n from records.record where id = any($1::uuid[])`, [jobs.map((j) => j.id)]);
    expect(statuses.rows).toEqual(jobs.map(() => ({ status: 'done', n: '500' })));
  }, 120_000);
});

describe('the claim plan', () => {
  it('is one index scan of farm_chunk_queue_idx in claim order, never past held leases, plus the leases that ran out by farm_chunk_lease_idx', async () => {
    // Two jobs: a job is cut into at most 10,000 chunks.
    for (let k = 0; k < 2; k++) await job({ pool: 'plan', frames: '1-10000', chunkSize: 1 });
    // 500 leases held at the head of the claim order.
    await world.sql.query(
      `update records.farm_chunk set state = 'leased', lease_expires_at = clock_timestamp() + interval '1 hour', claims = 1
        where pool = 'plan' and idx < 500`,
    );
    await world.sql.query('analyze records.farm_chunk');
    const { text, values } = claimStatement(
      'events.FarmJob.update',
      { pool: 'plan', kinds: null, worker: 'w', leaseSeconds: 60, leaseDigest: Buffer.alloc(32), reader: null },
      { eventId: newId(), actor: null },
    );
    const explain = async (mode: string) =>
      (await world.sql.query(`explain (${mode}) ${text}`, values)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    const plan = await explain('costs off');
    const queued = plan.slice(plan.indexOf('CTE queued'), plan.indexOf('CTE lapsed'));
    expect(queued).toMatch(/Limit\s+->\s+LockRows\s+->\s+Index Scan using farm_chunk_queue_idx on farm_chunk/);
    expect(queued).not.toMatch(/Sort|Seq Scan/);
    const lapsed = plan.slice(plan.indexOf('CTE lapsed'), plan.indexOf('CTE pick'));
    expect(lapsed).toMatch(/Index Scan using farm_chunk_lease_idx on farm_chunk[\s\S]*Index Cond: \(lease_expires_at <= statement_timestamp\(\)\)/);
    expect(lapsed).not.toMatch(/Seq Scan/);
    // Run, the statement reads the first queued chunk and no held lease.
    const analyzed = await explain('analyze, costs off, timing off, summary off');
    const scans = analyzed.slice(analyzed.indexOf('CTE queued'), analyzed.indexOf('CTE pick'));
    expect(scans).toMatch(/Index Scan using farm_chunk_queue_idx on farm_chunk c \(actual rows=1 loops=1\)/);
    expect(scans).not.toMatch(/Rows Removed by Filter/);
    const given = await world.sql.query<{ chunk: { idx: number } | null }>(text, values);
    expect(given.rows[0]!.chunk?.idx).toBe(501);
  });
});
