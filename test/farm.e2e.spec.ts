/**
 * The farm through the gateway (docs/api-notes.md, "Farm"; docs/farm.md): submitting jobs and
 * their 422s, the FarmJob as a record, the claim order and 204, leases (heartbeat, expiry moved
 * with SQL, 409 lease_lost), attempts and final failure, dependencies, pause/resume/cancel/retry
 * with their roles, tracked jobs and reports, the events each change writes (none for
 * heartbeats), and many agents claiming at once: every chunk handed out and completed once.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

/** Chunks of the contention test (`FARM_E2E_CHUNKS=10000` for the full run, docs/farm.md). */
const CONTENTION_CHUNKS = Number(process.env.FARM_E2E_CHUNKS ?? 2000);
const AGENTS = 32;

describe('farm (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let supervisor: Session;
  let artist: Session;
  let otherArtist: Session;
  let viewer: Session;
  let agent: Api;
  let sql: pg.Client;
  let projectId: string;

  beforeAll(async () => {
    e = await startE2EStack('farm');
    admin = await bootstrapAdmin(e.api);
    supervisor = await createUser(admin.api, 'Supervisor', 'sue@studio.test');
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    otherArtist = await createUser(admin.api, 'Artist', 'otto@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    // Agents are usually API keys; one key shared by every agent of a test.
    const key = expectStatus(await artist.api.post('/auth/api-keys', { name: 'farm agents' }), 200).token as string;
    agent = e.api.as(key);
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Farm', code: 'farm' } }), 200).id;
    sql = new pg.Client({ connectionString: e.db.url });
    await sql.connect();
  }, 180_000);
  afterAll(async () => {
    await sql?.end();
    await e?.teardown();
  });

  const submit = async (body: Record<string, unknown>, as: Api = artist.api) =>
    expectStatus(await as.post('/farm/jobs', { project_id: projectId, name: 'comp', kind: 'render', ...body }), 200, 'POST /farm/jobs');
  const claim = (pool: string, body: Record<string, unknown> = {}, as: Api = agent) => as.post('/farm/claim', { pool, worker: 'host-1', ...body });
  const chunksOf = async (jobId: string) => expectStatus(await admin.api.get(`/farm/jobs/${jobId}/chunks`), 200).items as any[];
  const expire = (chunkId: string) =>
    sql.query(`update records.farm_chunk set lease_expires_at = clock_timestamp() - interval '1 second' where id = $1`, [chunkId]);
  /**
   * The FarmJob `update` events of `jobId` after event `after`, once `count` of them are in the log
   * (the job's `create` may land after `after` was read: the relay publishes asynchronously).
   */
  const jobEvents = (jobId: string, after: number, count: number) =>
    eventually(
      async () => {
        const evs = (await eventsAfter(admin.api, after, '&entity_type=FarmJob')).filter((ev) => ev.entity_id === jobId && ev.action === 'update');
        return evs.length >= count ? evs.map((ev) => ({ action: ev.action, ...ev.changes })) : undefined;
      },
      15_000,
      `${count} events of job ${jobId}`,
    );

  it('submits a job: chunks cut from the frame list, a FarmJob record queryable like any other, 422s and 403s', async () => {
    const job = await submit({ frames: '1001-1100', chunk_size: 10, pool: 'submit' });
    expect(job).toMatchObject({ entity_type: 'FarmJob', status: 'queued', project_id: projectId, created_by: artist.user.id });
    expect(job.data).toMatchObject({ chunks_total: 10, chunks_done: 0, chunks_failed: 0, progress: 0, pool: 'submit', priority: 50, chunk_size: 10 });
    expect((await chunksOf(job.id)).map((c) => c.frames)).toEqual(Array.from({ length: 10 }, (_, i) => `${1001 + 10 * i}-${1010 + 10 * i}`));
    const stepped = await submit({ frames: '1-10,20-40x2', pool: 'submit' });
    expect((await chunksOf(stepped.id)).map((c) => c.frames)).toEqual(['1-10', '20,22,24,26,28,30,32,34,36,38', '40']);
    expect((await chunksOf((await submit({ pool: 'submit' })).id)).map((c) => c.frames)).toEqual([null]);

    const schema = expectStatus(await viewer.api.get('/schema'), 200);
    expect(schema.entity_types.find((t: any) => t.code === 'FarmJob')).toMatchObject({ builtin: true, project_scoped: true });
    expect(schema.statuses.filter((st: any) => st.entity_types.includes('FarmJob')).map((st: any) => st.code)).toEqual([
      'queued',
      'running',
      'done',
      'failed',
      'paused',
      'cancelled',
    ]);
    expectError(await admin.api.post('/schema/statuses/done/rename', { new_code: 'complete' }), 409, 'builtin');
    const found = expectStatus(
      await viewer.api.post('/entities/FarmJob/query', {
        filters: [
          ['id', 'is', job.id],
          ['status', 'is', 'queued'],
        ],
      }),
      200,
    );
    expect(found.items.map((r: any) => r.id)).toEqual([job.id]);
    expect(expectStatus(await viewer.api.get(`/entities/FarmJob/${job.id}`), 200).status).toBe('queued');

    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', frames: '10-1' }), ['body', 'frames']);
    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', priority: 101, chunk_size: 0 }), [
      'body',
      'priority',
    ]);
    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', depends_on: [projectId] }), [
      'body',
      'depends_on',
      0,
    ]);
    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', typo: 1 }), ['body', 'typo']);
    expectError(await viewer.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render' }), 403, 'forbidden');
    expectError(await e.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render' }), 401, 'unauthenticated');
    // The farm writes a FarmJob's status and counters; the generic routes refuse them.
    expectError(await admin.api.post('/entities/FarmJob', { project_id: projectId, data: { name: 'x' } }), 403, 'forbidden');
    expectError(await admin.api.patch(`/entities/FarmJob/${job.id}`, { status: 'done' }), 403, 'forbidden');
    expectError(await admin.api.patch(`/entities/FarmJob/${job.id}`, { data: { chunks_done: 10 } }), 403, 'forbidden');
    expect(expectStatus(await admin.api.patch(`/entities/FarmJob/${job.id}`, { data: { name: 'comp v2' } }), 200).data.name).toBe('comp v2');
    expectError(await admin.api.delete(`/entities/FarmJob/${job.id}`), 409, 'job_active');
  });

  it('claims by priority, then oldest job, then lowest index; 204 when nothing is due; Viewers may not claim', async () => {
    const low = await submit({ pool: 'order', priority: 10, frames: '1-2', chunk_size: 1 });
    const oldHigh = await submit({ pool: 'order', priority: 90, frames: '1-2', chunk_size: 1 });
    const newHigh = await submit({ pool: 'order', priority: 90, frames: '5', chunk_size: 1 });
    const names = new Map([
      [low.id, 'low'],
      [oldHigh.id, 'oldHigh'],
      [newHigh.id, 'newHigh'],
    ]);
    const got: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = expectStatus(await claim('order'), 200);
      got.push(`${names.get(c.job.id)}:${c.chunk.index}`);
      expect(c.chunk).toMatchObject({ attempt: 1, lease: expect.stringMatching(/^lease_/) });
    }
    expect(got).toEqual(['oldHigh:0', 'oldHigh:1', 'newHigh:0', 'low:0', 'low:1']);
    const none = await claim('order');
    expect(none.status).toBe(204);
    expect(none.text).toBe('');
    expectError(await claim('order', {}, viewer.api), 403, 'forbidden');
    expectValidation(await claim('order', { lease_seconds: 5 }), ['body', 'lease_seconds']);
    const sim = await submit({ pool: 'kinds', kind: 'sim' });
    expect((await claim('kinds', { kinds: ['render'] })).status).toBe(204);
    expect(expectStatus(await claim('kinds', { kinds: ['sim'] }), 200).job.id).toBe(sim.id);
  });

  it('leases: heartbeats extend and write no event; a wrong or expired lease is 409 lease_lost; expiry counts an attempt', async () => {
    const job = await submit({ pool: 'lease', frames: '1' });
    const after = await lastEventId(admin.api);
    const first = expectStatus(await claim('lease', { lease_seconds: 60 }), 200);
    const id = first.chunk.id;
    const hb = expectStatus(await agent.post(`/farm/chunks/${id}/heartbeat`, { lease: first.chunk.lease, progress: 50 }), 200);
    expect(Date.parse(hb.lease_expires_at)).toBeGreaterThanOrEqual(Date.parse(first.chunk.lease_expires_at));
    expect(hb.progress).toBe(50);
    expectError(await agent.post(`/farm/chunks/${id}/heartbeat`, { lease: 'lease_not-mine' }), 409, 'lease_lost');
    expectError(await agent.post(`/farm/chunks/00000000-0000-7000-8000-000000000000/complete`, { lease: first.chunk.lease }), 404, 'not_found');
    expectValidation(await agent.post(`/farm/chunks/${id}/heartbeat`, { lease: first.chunk.lease, progress: 101 }), ['body', 'progress']);

    await expire(id);
    expectError(await agent.post(`/farm/chunks/${id}/heartbeat`, { lease: first.chunk.lease }), 409, 'lease_lost');
    const again = expectStatus(await claim('lease'), 200);
    expect(again.chunk).toMatchObject({ id, attempt: 2 });
    expectError(await agent.post(`/farm/chunks/${id}/complete`, { lease: first.chunk.lease }), 409, 'lease_lost');
    // The current lease is enough, whoever presents it.
    const done = expectStatus(await otherArtist.api.post(`/farm/chunks/${id}/complete`, { lease: again.chunk.lease, output: { files: ['a.exr'] } }), 200);
    expect(done.job).toMatchObject({ status: 'done', data: expect.objectContaining({ chunks_done: 1, progress: 100, attempts_failed: 1 }) });
    expect(done.chunk).toMatchObject({ state: 'done', output: { files: ['a.exr'] } });
    const evs = await jobEvents(job.id, after, 3);
    expect(evs).toEqual([
      { action: 'update', status: 'running' },
      { action: 'update', attempts_failed: 1 },
      { action: 'update', status: 'done', chunks_done: 1, progress: 100 },
    ]);
  });

  it('fails a chunk after max_attempts: the job is failed and its other queued chunks are no longer offered; retry queues them again', async () => {
    const job = await submit({ pool: 'fail', frames: '1-3', chunk_size: 1, max_attempts: 2 });
    const after = await lastEventId(admin.api);
    const a = expectStatus(await claim('fail'), 200);
    const b = expectStatus(await claim('fail'), 200);
    const requeued = expectStatus(await agent.post(`/farm/chunks/${a.chunk.id}/fail`, { lease: a.chunk.lease, error: 'segfault' }), 200);
    expect(requeued.chunk).toMatchObject({ state: 'queued', error: 'segfault' });
    const a2 = expectStatus(await claim('fail'), 200);
    expect(a2.chunk).toMatchObject({ id: a.chunk.id, attempt: 2 });
    const failed = expectStatus(await agent.post(`/farm/chunks/${a.chunk.id}/fail`, { lease: a2.chunk.lease, error: 'segfault again' }), 200);
    expect(failed.job).toMatchObject({ status: 'failed', data: expect.objectContaining({ chunks_failed: 1, attempts_failed: 2 }) });
    expect((await claim('fail')).status).toBe(204);
    // A chunk already held may still complete.
    expectStatus(await agent.post(`/farm/chunks/${b.chunk.id}/complete`, { lease: b.chunk.lease }), 200);
    expect(await jobEvents(job.id, after, 4)).toEqual([
      { action: 'update', status: 'running' },
      { action: 'update', attempts_failed: 1 },
      { action: 'update', status: 'failed', chunks_failed: 1, attempts_failed: 2 },
      { action: 'update', chunks_done: 1, progress: 33 },
    ]);
    expectError(await otherArtist.api.post(`/farm/jobs/${job.id}/retry`), 403, 'forbidden');
    const retried = expectStatus(await artist.api.post(`/farm/jobs/${job.id}/retry`), 200);
    expect(retried).toMatchObject({ status: 'running', data: expect.objectContaining({ chunks_failed: 0 }) });
    const fresh = expectStatus(await claim('fail'), 200);
    expect(fresh.chunk).toMatchObject({ index: 0, attempt: 1 });

    // An expired last attempt is failed by the next claim instead of being handed out.
    const burn = await submit({ pool: 'burn', frames: '1-2', chunk_size: 1, max_attempts: 1 });
    const held = expectStatus(await claim('burn'), 200);
    await expire(held.chunk.id);
    expect((await claim('burn')).status).toBe(204);
    expect(expectStatus(await admin.api.get(`/entities/FarmJob/${burn.id}`), 200).status).toBe('failed');
    expect((await chunksOf(burn.id)).map((c) => c.state)).toEqual(['failed', 'queued']);
  });

  it('depends_on: a job is offered once every dependency is done', async () => {
    const dep = await submit({ pool: 'deps', priority: 1, frames: '1' });
    const child = await submit({ pool: 'deps', priority: 100, frames: '1', depends_on: [dep.id] });
    const c = expectStatus(await claim('deps'), 200);
    expect(c.job.id).toBe(dep.id);
    expect((await claim('deps')).status).toBe(204);
    expectStatus(await agent.post(`/farm/chunks/${c.chunk.id}/complete`, { lease: c.chunk.lease }), 200);
    expect(expectStatus(await claim('deps'), 200).job.id).toBe(child.id);
  });

  it('pause, resume and cancel: the submitter, Admin, Supervisor, Coordinator; cancelling makes held leases lease_lost', async () => {
    const job = await submit({ pool: 'chg', frames: '1-4', chunk_size: 1 });
    expectError(await viewer.api.post(`/farm/jobs/${job.id}/pause`), 403, 'forbidden');
    expectError(await otherArtist.api.post(`/farm/jobs/${job.id}/pause`), 403, 'forbidden');
    expect(expectStatus(await artist.api.post(`/farm/jobs/${job.id}/pause`), 200).status).toBe('paused');
    expect((await claim('chg')).status).toBe(204);
    expectError(await artist.api.post(`/farm/jobs/${job.id}/pause`), 409, 'transition_not_allowed');
    expect(expectStatus(await supervisor.api.post(`/farm/jobs/${job.id}/resume`), 200).status).toBe('queued');
    const held = expectStatus(await claim('chg'), 200);
    expect(expectStatus(await admin.api.post(`/farm/jobs/${job.id}/pause`), 200).status).toBe('paused');
    // Held leases of a paused job may still complete.
    expectStatus(await agent.post(`/farm/chunks/${held.chunk.id}/heartbeat`, { lease: held.chunk.lease }), 200);
    expect(expectStatus(await admin.api.post(`/farm/jobs/${job.id}/resume`), 200).status).toBe('running');
    const held2 = expectStatus(await claim('chg'), 200);
    expect(expectStatus(await admin.api.post(`/farm/jobs/${job.id}/cancel`), 200).status).toBe('cancelled');
    expectError(await agent.post(`/farm/chunks/${held2.chunk.id}/complete`, { lease: held2.chunk.lease }), 409, 'lease_lost');
    expect((await claim('chg')).status).toBe(204);
    expectError(await admin.api.post('/farm/jobs/00000000-0000-7000-8000-000000000000/cancel'), 404, 'not_found');
    // Four routes, one per change: any other word names no route.
    expectError(await admin.api.post(`/farm/jobs/${job.id}/explode`), 404, 'not_found');
    expect(expectStatus(await admin.api.delete(`/entities/FarmJob/${job.id}`), 200).retired).toBe(true);
  });

  it('a tracked job is never offered; its bridge reports on it; a job without a manager is 409 not_tracked', async () => {
    const tracked = await submit({ pool: 'tracked', manager: 'deadline', external_id: 'dl-42', frames: '1-100' });
    expect((await claim('tracked')).status).toBe(204);
    const after = await lastEventId(admin.api);
    const r = expectStatus(await artist.api.post(`/farm/jobs/${tracked.id}/report`, { status: 'running', progress: 40, chunks_done: 4 }), 200);
    expect(r).toMatchObject({ status: 'running', data: expect.objectContaining({ progress: 40, chunks_done: 4, external_id: 'dl-42' }) });
    expect(await jobEvents(tracked.id, after, 1)).toEqual([{ action: 'update', status: 'running', progress: 40, chunks_done: 4 }]);
    expectError(await otherArtist.api.post(`/farm/jobs/${tracked.id}/report`, { progress: 50 }), 403, 'forbidden');
    const plain = await submit({ pool: 'tracked' });
    expectError(await artist.api.post(`/farm/jobs/${plain.id}/report`, { progress: 50 }), 409, 'not_tracked');
    expectValidation(await artist.api.post(`/farm/jobs/${tracked.id}/report`, { status: 'exploded' }), ['body', 'status']);
  });

  it(`${CONTENTION_CHUNKS} chunks claimed by ${AGENTS} concurrent agents: every chunk handed out once and completed once`, async () => {
    const jobs = Math.max(1, Math.ceil(CONTENTION_CHUNKS / 10_000));
    const perJob = Math.ceil(CONTENTION_CHUNKS / jobs);
    const ids: string[] = [];
    for (let j = 0; j < jobs; j++) ids.push((await submit({ pool: 'race', frames: `1-${perJob}`, chunk_size: 1 })).id);
    const handed = new Map<string, number>();
    const completed = new Map<string, number>();
    const t0 = Date.now();
    const work = async (n: number) => {
      for (;;) {
        const c = await agent.post('/farm/claim', { pool: 'race', worker: `agent-${n}`, lease_seconds: 600 });
        if (c.status === 204) return;
        const { chunk } = expectStatus(c, 200, 'claim');
        handed.set(chunk.id, (handed.get(chunk.id) ?? 0) + 1);
        expectStatus(await agent.post(`/farm/chunks/${chunk.id}/complete`, { lease: chunk.lease }), 200, 'complete');
        completed.set(chunk.id, (completed.get(chunk.id) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: AGENTS }, (_, n) => work(n)));
    const seconds = (Date.now() - t0) / 1000;
    process.stdout.write(`[farm] ${handed.size} chunks by ${AGENTS} agents in ${seconds.toFixed(1)} s (${(handed.size / seconds).toFixed(0)} chunks/s)\n`);
    expect(handed.size).toBe(jobs * perJob);
    expect([...handed.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...completed.values()].filter((n) => n !== 1)).toEqual([]);
    const rows = await sql.query(`select state, claims, count(*)::int as n from records.farm_chunk where job_id = any($1::uuid[]) group by 1, 2`, [ids]);
    expect(rows.rows).toEqual([{ state: 'done', claims: 1, n: jobs * perJob }]);
    for (const id of ids)
      expect(expectStatus(await admin.api.get(`/entities/FarmJob/${id}`), 200)).toMatchObject({
        status: 'done',
        data: expect.objectContaining({ chunks_done: perJob, progress: 100 }),
      });
  }, 600_000);

  it("records killed with SIGKILL while agents claim: after it restarts every chunk ends done exactly once; a dead agent's chunk is done by another", async () => {
    const total = 400;
    const job = await submit({ pool: 'crash', frames: `1-${total}`, chunk_size: 1, max_attempts: 5 });
    const after = await lastEventId(admin.api);
    // An agent that dies mid-chunk: it claims and is never heard of again.
    const dead = expectStatus(await agent.post('/farm/claim', { pool: 'crash', worker: 'dies', lease_seconds: 10 }), 200).chunk;
    const completed = new Map<string, number>();
    let stop = false;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const attempt = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch {
        return undefined; // the connection broke while records was down
      }
    };
    const work = async (n: number) => {
      while (!stop) {
        const c = await attempt(() => agent.post('/farm/claim', { pool: 'crash', worker: `agent-${n}`, lease_seconds: 10 }));
        if (!c || c.status !== 200) {
          await sleep(c?.status === 204 ? 250 : 100);
          continue;
        }
        const { chunk } = c.body;
        for (;;) {
          const res = await attempt(() => agent.post(`/farm/chunks/${chunk.id}/complete`, { lease: chunk.lease }));
          if (res?.status === 200) completed.set(chunk.id, (completed.get(chunk.id) ?? 0) + 1);
          // 409: the chunk is done (the answer to an earlier try was lost) or its lease is gone.
          if (res && (res.status === 200 || res.status === 409)) break;
          await sleep(100);
        }
      }
    };
    const agents = Array.from({ length: 16 }, (_, n) => work(n));
    await eventually(async () => (completed.size >= 40 ? true : undefined), 30_000, 'agents at work');
    await e.stack.kill('records', 'SIGKILL');
    await sleep(500);
    await e.stack.restart('records');
    const finished = await eventually(
      async () => {
        const res = await attempt(() => admin.api.get(`/entities/FarmJob/${job.id}`));
        return res?.status === 200 && res.body.status === 'done' ? res.body : undefined;
      },
      90_000,
      'the job done after the restart',
    );
    stop = true;
    await Promise.all(agents);
    expect(finished.data).toMatchObject({ chunks_done: total, progress: 100 });
    const rows = await sql.query(`select state, count(*)::int as n from records.farm_chunk where job_id = $1 group by 1`, [job.id]);
    expect(rows.rows).toEqual([{ state: 'done', n: total }]);
    expect([...completed.values()].filter((n) => n !== 1)).toEqual([]);
    const deadRow = (await sql.query(`select worker, claims from records.farm_chunk where id = $1`, [dead.id])).rows[0];
    expect(deadRow.worker).not.toBe('dies');
    expect(deadRow.claims).toBeGreaterThanOrEqual(2);
    // One event per completed chunk, none lost or doubled across the crash: chunks_done runs 1..total.
    const evs = await jobEvents(job.id, after, total);
    const doneCounts = evs.filter((ev) => ev.action === 'update' && ev.chunks_done !== undefined).map((ev) => ev.chunks_done as number);
    expect(doneCounts).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  }, 300_000);
});
