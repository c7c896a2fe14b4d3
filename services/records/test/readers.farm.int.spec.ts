/**
 * The reader rule in the farm (docs/api-notes.md, "Restricted projects"; docs/farm.md) against the
 * real PostgreSQL through records' signed FarmService: a caller who may not read a restricted
 * project is handed none of its chunks (queued or lapsed) while a member and an Admin claim them,
 * finds neither its jobs nor their chunks (404 on reads, job changes, reports, heartbeats,
 * completes and fails), and sees the change of membership on the next claim. An agent key with
 * pools claims only from them. The claim's plan under the rule stays one index scan in claim order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, newId, type CallContext, type GrpcClient, type Principal, type Role } from '@reelbase/lib-platform';
import { appErrorOf, TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import { farmv1, type recordsv1 } from '@reelbase/proto';
import { claimStatement } from '../src/farm/store/farm.statements.js';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';
import { openAndSecret, project, restrict } from './readers.helper.js';

const as = (role: Role, userId: string = newId(), more: Partial<Principal> = {}): CallContext => ({
  requestId: `r-${role}`,
  principal: { userId, role, authKind: 'token', ...more },
});
const admin = as('Admin');
const memberId = newId();
const member = as('Artist', memberId);
const outsiderId = newId();
const outsider = as('Artist', outsiderId);

let world: RecordsWorld;
let farm: GrpcClient<farmv1.FarmServiceClient>;
let open: string;
let secret: string;

beforeAll(async () => {
  world = await startRecordsWorld('readers_farm', { FARM_SWEEP_MS: '600000' });
  farm = createGrpcClient(farmv1.FarmServiceClient, farmv1.FarmServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'farm',
    address: `127.0.0.1:${world.running.grpcPort}`,
  });
  ({ open, secret } = await openAndSecret(world, [memberId], admin));
});

afterAll(async () => {
  farm?.close();
  await world?.stop();
});

async function job(projectId: string, body: Partial<farmv1.CreateJobRequest> = {}): Promise<recordsv1.Record> {
  return (await farm.call.createJob({ projectId, name: 'job', kind: 'render', dependsOn: [], ...body }, admin)).job!;
}

const claim = (pool: string, ctx: CallContext) => farm.call.claim({ pool, worker: 'w1', kinds: [] }, ctx);

describe('claims', () => {
  it("a non-member claims nothing of a restricted project's jobs, whatever their priority; a member and an Admin claim them", async () => {
    const hidden = await job(secret, { pool: 'mixed', priority: 100, frames: '1-3', chunkSize: 1 });
    const visible = await job(open, { pool: 'mixed', priority: 10 });
    const first = await claim('mixed', outsider);
    expect([first.job!.id, first.chunk!.index]).toEqual([visible.id, 0]);
    expect(await claim('mixed', outsider)).toEqual({});
    const byMember = await claim('mixed', member);
    const byAdmin = await claim('mixed', admin);
    expect([byMember.job!.id, byMember.chunk!.index, byAdmin.job!.id, byAdmin.chunk!.index]).toEqual([hidden.id, 0, hidden.id, 1]);
    // A service acting for itself reads every project too.
    const service: CallContext = { requestId: 'svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
    expect((await claim('mixed', service)).chunk!.index).toBe(2);
  });

  it("a lapsed lease of a restricted project's job is no candidate for a non-member; its member claims it with the attempt counted", async () => {
    await job(secret, { pool: 'lapsed' });
    const held = await claim('lapsed', member);
    await world.sql.query(`update records.farm_chunk set lease_expires_at = clock_timestamp() - interval '1 second' where id = $1`, [held.chunk!.id]);
    expect(await claim('lapsed', outsider)).toEqual({});
    const again = await claim('lapsed', member);
    expect([again.chunk!.id, again.chunk!.attempt]).toEqual([held.chunk!.id, 2]);
  });

  it('follows membership: added, the user claims on the next call; the project opened, anyone does; restricted again, nobody but members', async () => {
    const changing = await project(world, 'm', admin);
    await restrict(world.sql, changing, [memberId]);
    await job(changing, { pool: 'membership', frames: '1-3', chunkSize: 1 });
    expect(await claim('membership', outsider)).toEqual({});
    await restrict(world.sql, changing, [memberId, outsiderId]);
    expect((await claim('membership', outsider)).chunk!.index).toBe(0);
    await restrict(world.sql, changing, [memberId], false);
    expect((await claim('membership', as('Coordinator'))).chunk!.index).toBe(1);
    await restrict(world.sql, changing, []);
    expect(await claim('membership', outsider)).toEqual({});
    expect((await claim('membership', admin)).chunk!.index).toBe(2);
  });
});

describe('chunks and jobs of a project the caller may not read do not exist for them', () => {
  it('heartbeat, complete and fail with the current lease: 404 for a non-member (not lease_lost), the work goes on for the member', async () => {
    const hidden = await job(secret, { pool: 'leases', frames: '1-2', chunkSize: 1 });
    const held = await claim('leases', member);
    const lease = { chunkId: held.chunk!.id, lease: held.lease! };
    for (const call of [
      () => farm.call.heartbeat({ ...lease, progress: 10 }, outsider),
      () => farm.call.completeChunk(lease, outsider),
      () => farm.call.failChunk({ ...lease, error: 'x' }, outsider),
    ]) {
      const err = await appErrorOf(call());
      expect([err.kind, err.message]).toEqual(['not_found', `chunk ${held.chunk!.id} not found`]);
    }
    // A lease that is not the current one is still 409 to the member, and a stranger's chunk 404 to them.
    expect((await appErrorOf(farm.call.heartbeat({ chunkId: held.chunk!.id, lease: 'lease_wrong' }, outsider))).kind).toBe('not_found');
    expect((await appErrorOf(farm.call.heartbeat({ chunkId: held.chunk!.id, lease: 'lease_wrong' }, member))).code).toBe('lease_lost');
    expect((await farm.call.heartbeat({ ...lease, progress: 20 }, member)).chunk!.progress).toBe(20);
    const done = await farm.call.completeChunk(lease, member);
    expect([done.chunk!.state, done.job!.id]).toEqual(['done', hidden.id]);
    const next = await claim('leases', admin);
    expect((await farm.call.failChunk({ chunkId: next.chunk!.id, lease: next.lease!, error: 'x' }, admin)).chunk!.state).toBe('queued');
  });

  it('the job, its chunk pages, its changes and reports: 404 for a non-member of any role; the member and an Admin reach them', async () => {
    const hidden = await job(secret, { pool: 'reads' });
    const tracked = await job(secret, { pool: 'reads', manager: 'deadline' });
    const supervisor = as('Supervisor', outsiderId);
    for (const ctx of [outsider, supervisor]) {
      const refusals = await Promise.all([
        appErrorOf(farm.call.getJob({ jobId: hidden.id }, ctx)),
        appErrorOf(farm.call.listChunks({ jobId: hidden.id }, ctx)),
        appErrorOf(farm.call.changeJob({ jobId: hidden.id, action: 'pause' }, ctx)),
        appErrorOf(farm.call.reportJob({ jobId: tracked.id, progress: 50 }, ctx)),
      ]);
      expect(refusals.map((e) => e.kind)).toEqual(['not_found', 'not_found', 'not_found', 'not_found']);
      expect(refusals[0]!.message).toBe(`FarmJob ${hidden.id} not found`);
    }
    expect((await farm.call.getJob({ jobId: hidden.id }, member)).job!.id).toBe(hidden.id);
    expect((await farm.call.listChunks({ jobId: hidden.id }, member)).chunks).toHaveLength(1);
    // The member is an Artist who did not submit it: the role rule still decides after existence.
    expect((await appErrorOf(farm.call.changeJob({ jobId: hidden.id, action: 'pause' }, member))).kind).toBe('forbidden');
    expect((await farm.call.changeJob({ jobId: hidden.id, action: 'pause' }, as('Supervisor', memberId))).job!.status).toBe('paused');
    expect((await farm.call.reportJob({ jobId: tracked.id, progress: 50 }, admin)).job!.id).toBe(tracked.id);
    // An open project's job is read by anyone.
    const visible = await job(open, { pool: 'reads' });
    expect((await farm.call.getJob({ jobId: visible.id }, outsider)).job!.status).toBe('queued');
    expect((await appErrorOf(farm.call.getJob({ jobId: newId() }, admin))).kind).toBe('not_found');
  });

  it('a submission into the project is 404 for a non-member, and its Version, Task or dependency count as absent; the member submits', async () => {
    const refused = await appErrorOf(farm.call.createJob({ projectId: secret, name: 'j', kind: 'render', dependsOn: [] }, outsider));
    expect(refused).toMatchObject({ kind: 'not_found', message: `Project ${secret} not found` });
    const hiddenJob = await job(secret, { pool: 'submits' });
    const linked = await appErrorOf(farm.call.createJob({ projectId: open, name: 'j', kind: 'render', dependsOn: [hiddenJob.id] }, outsider));
    expect(linked.kind).toBe('invalid');
    expect(linked.problems.map((x) => x.loc)).toEqual([['depends_on', 0]]);
    const mine = await farm.call.createJob({ projectId: secret, name: 'j', kind: 'render', dependsOn: [hiddenJob.id] }, member);
    expect(mine.job!.projectId).toBe(secret);
  });
});

describe('agent keys with pools', () => {
  it('claim only from their pools: another pool is 403 naming them; without pools any pool', async () => {
    const key = (pools?: string[]) => as('Artist', memberId, { authKind: 'api_key', apiKeyId: newId(), scope: 'agent', ...(pools ? { pools } : {}) });
    await job(open, { pool: 'gpu' });
    await job(open, { pool: 'cpu' });
    const refused = await appErrorOf(claim('cpu', key(['gpu', 'gpu-large'])));
    expect([refused.kind, refused.message]).toEqual(['forbidden', 'this agent key claims only from the pools "gpu", "gpu-large", not "cpu"']);
    expect((await claim('gpu', key(['gpu', 'gpu-large']))).job).toBeDefined();
    expect((await claim('cpu', key())).job).toBeDefined();
    // A key's pools bound what it claims, not what it may read: a hidden project stays hidden.
    await job(secret, { pool: 'gpu-large' });
    expect(await claim('gpu-large', as('Artist', outsiderId, { authKind: 'api_key', scope: 'agent', pools: ['gpu-large'] }))).toEqual({});
    expect((await claim('gpu-large', key(['gpu-large']))).job).toBeDefined();
  });
});

describe('the claim plan under the reader rule', () => {
  it("is still one scan of farm_chunk_queue_idx in claim order, each candidate's job found by its primary key", async () => {
    // A restricted project's 2,000 chunks at the head of the claim order, an open job behind them.
    const head = await job(secret, { pool: 'plan', priority: 100, frames: '1-2000', chunkSize: 1 });
    await job(open, { pool: 'plan', priority: 10, frames: '1-10', chunkSize: 1 });
    // A studio's worth of records beside them, and its restricted projects.
    await world.sql.query(
      `insert into records.record (id, entity_type, project_id, status, active, created_at, updated_at, data)
       select gen_random_uuid(), 'Shot', $1, null, true, now(), now(), jsonb_build_object('code', 'sh' || i) from generate_series(1, 50000) i`,
      [open],
    );
    for (let k = 0; k < 20; k++) {
      await restrict(world.sql, await project(world, `r${k}`, admin), [newId()]);
    }
    await world.sql.query('analyze records.farm_chunk');
    await world.sql.query('analyze records.record');
    const statement = (reader: string | null) =>
      claimStatement(
        'events.FarmJob.update',
        { pool: 'plan', kinds: null, worker: 'w', leaseSeconds: 60, leaseDigest: Buffer.alloc(32), reader },
        { eventId: newId(), actor: null },
      );
    /** The plan the farm pool runs: the statement prepared, with its generic plan (farm.repository.ts, openFarmPool). */
    const explain = async (reader: string | null, mode: string) => {
      const { text, values } = statement(reader);
      const literal = (v: unknown) =>
        v === null ? 'null' : Buffer.isBuffer(v) ? `'\\x${v.toString('hex')}'` : typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;
      await world.sql.query('begin');
      try {
        await world.sql.query(`set local plan_cache_mode = force_generic_plan`);
        await world.sql.query(`prepare claim_plan as ${text}`);
        const res = await world.sql.query(`explain (${mode}) execute claim_plan(${values.map(literal).join(', ')})`);
        return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      } finally {
        await world.sql.query('rollback');
        await world.sql.query('deallocate all');
      }
    };
    for (const reader of [outsiderId, memberId]) {
      const plan = await explain(reader, 'costs off');
      const queued = plan.slice(plan.indexOf('CTE queued'), plan.indexOf('CTE lapsed'));
      expect(queued).toMatch(/Index Scan using farm_chunk_queue_idx on farm_chunk c/);
      expect(queued).toMatch(/Index (Only )?Scan using record_pkey on record j/);
      expect(queued).not.toMatch(/Seq Scan|Sort|Hash Join|Hash Semi Join/);
      const lapsed = plan.slice(plan.indexOf('CTE lapsed'), plan.indexOf('CTE pick'));
      expect(lapsed).toMatch(/Index Scan using farm_chunk_lease_idx on farm_chunk/);
      expect(lapsed).not.toMatch(/Seq Scan on farm_chunk|Seq Scan on record /);
    }
    // Without a reader (an Admin) the statement is the one it always was: no lookup of the job.
    expect(await explain(null, 'costs off')).not.toMatch(/record j/);
    // Run: the member's claim reads the first queued chunk; the non-member's passes over the 2,000 hidden ones.
    const member = await explain(memberId, 'analyze, costs off, timing off, summary off');
    expect(member.slice(member.indexOf('CTE queued'), member.indexOf('CTE lapsed'))).toMatch(
      /Index Scan using farm_chunk_queue_idx on farm_chunk c \(actual rows=1 loops=1\)/,
    );
    const outsiderPlan = await explain(outsiderId, 'analyze, costs off, timing off, summary off');
    expect(outsiderPlan.slice(outsiderPlan.indexOf('CTE queued'), outsiderPlan.indexOf('CTE lapsed'))).toMatch(/Rows Removed by Filter: 2000/);
    const { text, values } = statement(outsiderId);
    const given = await world.sql.query<{ job: { id: string } | null }>(text, values);
    expect(given.rows[0]!.job?.id).not.toBe(head.id);
  });
});
