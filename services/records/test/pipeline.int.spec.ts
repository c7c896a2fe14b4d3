/**
 * Idempotency keys, batches and summaries against the real PostgreSQL and NATS through records'
 * signed gRPC services (docs/architecture.md, "Idempotency keys, batches and summaries"): a key is
 * claimed once, answers again, conflicts on another body, is taken over only after its lease, and
 * is swept once expired; a batch is one transaction whose events leave as ONE stream message, in
 * request order, even while single writes commit at the same time; a summary groups in SQL.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import { idempotencyv1 } from '@reelbase/proto';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { idempotencyClientOf, startRecordsWorld, text, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const asService: CallContext = { requestId: 'pc-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const admin: CallContext = { requestId: 'pc-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const viewer: CallContext = { requestId: 'pc-viewer', principal: { userId: newId(), role: 'Viewer', authKind: 'token' } };
const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;

const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
    { code: 'Sequence', project_scoped: true, fields: [text('code')] },
    {
      code: 'Shot',
      project_scoped: true,
      fields: [text('code'), { code: 'sequence', type: 'link', link_types: ['Sequence'] }, { code: 'cut_in', type: 'integer' }, { code: 'due', type: 'date' }],
    },
  ],
  statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }],
  steps: [],
  priorities: [],
  transitions: {},
  task_templates: [],
};

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let world: RecordsWorld;
let keys: GrpcClient<idempotencyv1.IdempotencyServiceClient>;
let stream: StreamReader;
let projectId: string;

beforeAll(async () => {
  world = await startRecordsWorld('pipeline_calls');
  await world.client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  keys = idempotencyClientOf(world);
  stream = await StreamReader.open(world.prefix);
  projectId = (await world.client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'P', code: 'p' }) }, admin)).record!.id;
});

afterAll(async () => {
  keys?.close();
  await stream?.close();
  await world?.stop();
});

const batch = async (requests: unknown[], ctx: CallContext = admin) =>
  JSON.parse((await world.client.call.batchRecords({ requestsJson: JSON.stringify(requests) }, ctx)).json) as { results: any[] };
const shot = (code: string, extra: Record<string, unknown> = {}) => ({
  request_type: 'create',
  entity_type: 'Shot',
  project_id: projectId,
  data: { code, ...extra },
});
const countShots = async (codes: string[]) =>
  Number(
    (await world.sql.query<{ n: string }>(`select count(*) as n from records.record where entity_type = 'Shot' and data->>'code' = any($1)`, [codes])).rows[0]!
      .n,
  );

describe('idempotency keys', () => {
  const claim = (scope: string, body: string, leaseMs = 60_000, principal = 'user:tester', maxKeys = 10_000) =>
    keys.call.claim({ scope: sha(scope), bodyHash: sha(body), leaseMs, keepMs: 86_400_000, principal, maxKeys }, asService);

  it('claims once, tells a repeat it is in flight, answers the stored answer, and conflicts on another body', async () => {
    const first = await claim('k1', 'a');
    expect(first.outcome).toBe(Outcome.OUTCOME_CLAIMED);
    expect((await claim('k1', 'a')).outcome).toBe(Outcome.OUTCOME_IN_FLIGHT);
    expect((await claim('k1', 'b')).outcome).toBe(Outcome.OUTCOME_CONFLICT);
    const answer = { status: 201, headersJson: JSON.stringify({ etag: '"x"' }), body: '{"id":1}' };
    expect((await keys.call.finish({ scope: sha('k1'), claim: first.claim, answer }, asService)).stored).toBe(true);
    const replay = await claim('k1', 'a');
    expect(replay.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(replay.answer).toEqual(answer);
    expect((await claim('k1', 'b')).outcome).toBe(Outcome.OUTCOME_CONFLICT);
  });

  it('a released key runs again; a 5xx is never stored; a lease that ran out is taken over by the same body only', async () => {
    const first = await claim('k2', 'a');
    await keys.call.release({ scope: sha('k2'), claim: first.claim }, asService);
    const again = await claim('k2', 'a');
    expect(again.outcome).toBe(Outcome.OUTCOME_CLAIMED);
    const refused = await appErrorOf(
      keys.call.finish({ scope: sha('k2'), claim: again.claim, answer: { status: 503, headersJson: '{}', body: '' } }, asService),
    );
    expect(refused.kind).toBe('invalid');

    const short = await claim('k3', 'a', 1000);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await claim('k3', 'b')).outcome).toBe(Outcome.OUTCOME_CONFLICT);
    const taken = await claim('k3', 'a');
    expect(taken.outcome).toBe(Outcome.OUTCOME_CLAIMED);
    // The first holder finishes too late: its answer is not stored over the new claim.
    expect((await keys.call.finish({ scope: sha('k3'), claim: short.claim, answer: { status: 200, headersJson: '{}', body: 'old' } }, asService)).stored).toBe(
      false,
    );
  });

  it('a create stores its answer with its record in one statement, so the key answers it even if the gateway never finishes', async () => {
    const c = await claim('k5', 'a');
    const created = (
      await world.client.call.createRecord(
        { entityType: 'Shot', projectId, dataJson: JSON.stringify({ code: 'atomic', cut_in: 7 }), idempotency: { scope: sha('k5'), claim: c.claim } },
        admin,
      )
    ).record!;
    // No Finish: the answer was stored by the insert itself.
    const replay = await claim('k5', 'a');
    expect(replay.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(replay.answer!.status).toBe(200);
    expect(JSON.parse(replay.answer!.headersJson)).toEqual({ 'content-type': 'application/json; charset=utf-8', etag: `"${created.updatedAt}"` });
    expect(JSON.parse(replay.answer!.body)).toEqual({
      id: created.id,
      entity_type: 'Shot',
      project_id: projectId,
      status: null,
      active: true,
      thumbnail_id: null,
      created_by: admin.principal!.userId,
      created_at: created.createdAt,
      updated_at: created.updatedAt,
      data: { code: 'atomic', cut_in: 7 },
    });
    // A later Finish does not overwrite it.
    expect((await keys.call.finish({ scope: sha('k5'), claim: c.claim, answer: { status: 200, headersJson: '{}', body: 'late' } }, asService)).stored).toBe(
      false,
    );
    // A create refused by the schema stores nothing: the key stays claimed.
    const d = await claim('k6', 'a');
    await appErrorOf(
      world.client.call.createRecord(
        { entityType: 'Shot', projectId, dataJson: JSON.stringify({ code: 'x', cut_in: 'no' }), idempotency: { scope: sha('k6'), claim: d.claim } },
        admin,
      ),
    );
    expect((await claim('k6', 'a')).outcome).toBe(Outcome.OUTCOME_IN_FLIGHT);
  });

  it('holds a principal to its live keys: a new key past the limit is refused until one expires; known keys still answer', async () => {
    const who = 'user:capped';
    const first = await claim('cap-0', 'a', 60_000, who, 3);
    await keys.call.finish({ scope: sha('cap-0'), claim: first.claim, answer: { status: 200, headersJson: '{}', body: 'zero' } }, asService);
    expect((await claim('cap-1', 'a', 60_000, who, 3)).outcome).toBe(Outcome.OUTCOME_CLAIMED);
    expect((await claim('cap-2', 'a', 60_000, who, 3)).outcome).toBe(Outcome.OUTCOME_CLAIMED);
    const refused = await claim('cap-3', 'a', 60_000, who, 3);
    expect(refused.outcome).toBe(Outcome.OUTCOME_LIMITED);
    // The oldest key expires in a day: the wait says so.
    expect(refused.retryAfterMs).toBeGreaterThan(23 * 3600 * 1000);
    expect(await countKeys(`select count(*) as n from records.idempotency_key where scope = $1`, [sha('cap-3')])).toBe(0);
    // A key already held still answers (replay, in flight), and another principal is not held back.
    expect((await claim('cap-0', 'a', 60_000, who, 3)).outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect((await claim('cap-1', 'a', 60_000, who, 3)).outcome).toBe(Outcome.OUTCOME_IN_FLIGHT);
    expect((await claim('cap-other', 'a', 60_000, 'user:other', 3)).outcome).toBe(Outcome.OUTCOME_CLAIMED);
    // Once one expires, a new key is taken again.
    await world.sql.query(`update records.idempotency_key set expires_at = clock_timestamp() - interval '1 second' where scope = $1`, [sha('cap-0')]);
    expect((await claim('cap-3', 'a', 60_000, who, 3)).outcome).toBe(Outcome.OUTCOME_CLAIMED);
    expect(await countKeys(`select count(*) as n from records.idempotency_key where principal = $1 and expires_at > clock_timestamp()`, [who])).toBe(3);

    // Forty new keys at once for the last places: the principal never ends up holding more than the limit.
    const racer = 'user:racer';
    const raced = await Promise.all(Array.from({ length: 40 }, (_, i) => claim(`race-${i}`, 'a', 60_000, racer, 10)));
    const live = await countKeys(`select count(*) as n from records.idempotency_key where principal = $1 and expires_at > clock_timestamp()`, [racer]);
    expect(live).toBeLessThanOrEqual(10);
    expect(raced.filter((r) => r.outcome === Outcome.OUTCOME_CLAIMED)).toHaveLength(live);
    expect(raced.every((r) => r.outcome === Outcome.OUTCOME_CLAIMED || r.outcome === Outcome.OUTCOME_LIMITED)).toBe(true);
  });

  it('sweeps expired keys by time in the database', async () => {
    const c = await keys.call.claim({ scope: sha('k4'), bodyHash: sha('a'), leaseMs: 1000, keepMs: 1000, principal: 'user:tester', maxKeys: 0 }, asService);
    await keys.call.finish({ scope: sha('k4'), claim: c.claim, answer: { status: 200, headersJson: '{}', body: 'x' } }, asService);
    await world.sql.query(`update records.idempotency_key set expires_at = clock_timestamp() - interval '1 second' where scope = $1`, [sha('k4')]);
    // An expired key is a new key again, even with another body.
    expect((await claim('k4', 'b')).outcome).toBe(Outcome.OUTCOME_CLAIMED);
    await world.sql.query(`update records.idempotency_key set expires_at = clock_timestamp() - interval '1 second'`);
    const sweeper = await startRecordsWorldSweep();
    expect(sweeper).toBe(0);
  });
});

async function countKeys(sql: string, params: unknown[]): Promise<number> {
  return Number((await world.sql.query<{ n: string }>(sql, params)).rows[0]!.n);
}

/** Rows left after the sweeper of a second replica (1 s period) has run. */
async function startRecordsWorldSweep(): Promise<number> {
  const { startRecordsReplica } = await import('./records.world.js');
  const replica = await startRecordsReplica(world.db.url, world.prefix, 'sweeper', { IDEMPOTENCY_SWEEP_MS: '1000' });
  try {
    for (let i = 0; i < 50; i++) {
      const n = Number((await world.sql.query<{ n: string }>('select count(*) as n from records.idempotency_key')).rows[0]!.n);
      if (n === 0) return 0;
      await new Promise((r) => setTimeout(r, 200));
    }
    return Number((await world.sql.query<{ n: string }>('select count(*) as n from records.idempotency_key')).rows[0]!.n);
  } finally {
    replica.client.close();
    await replica.running.stop();
  }
}

describe('batches', () => {
  it('is all or nothing: the first failing request decides, located at its index, and nothing is written', async () => {
    const bad = await appErrorOf(batch([shot('n0'), shot('n1'), shot('n2'), shot('n3', { cut_in: 'x' }), shot('n4', { nope: 1 })]));
    expect(bad.kind).toBe('invalid');
    expect(bad.problems.map((p) => p.loc)).toEqual([['requests', 3, 'data', 'cut_in']]);
    expect(await countShots(['n0', 'n1', 'n2', 'n3', 'n4'])).toBe(0);

    const missing = await appErrorOf(batch([shot('n0'), { request_type: 'delete', entity_type: 'Shot', entity_id: newId() }]));
    expect(missing.kind).toBe('not_found');
    expect(missing.extra).toMatchObject({ index: 1 });
    const forbidden = await appErrorOf(batch([shot('n0')], viewer));
    expect(forbidden.kind).toBe('forbidden');
    expect(forbidden.extra).toMatchObject({ index: 0 });
    const shape = await appErrorOf(batch([shot('n0'), { request_type: 'update', entity_type: 'Shot' }]));
    expect(shape.problems.map((p) => p.loc)).toEqual([['requests', 1, 'entity_id']]);
    expect(await countShots(['n0'])).toBe(0);
  });

  it('publishes a batch as one message with its events in request order, while single writes commit beside it', async () => {
    const seq = (await world.client.call.createRecord({ entityType: 'Sequence', projectId, dataJson: '{"code":"sq"}' }, admin)).record!;
    const singles = Array.from({ length: 40 }, (_, i) =>
      world.client.call.createRecord({ entityType: 'Shot', projectId, dataJson: JSON.stringify({ code: `single${i}` }) }, admin),
    );
    const requests = [
      ...Array.from({ length: 60 }, (_, i) => shot(`b${i}`, { sequence: { type: 'Sequence', id: seq.id } })),
      { request_type: 'update', entity_type: 'Sequence', entity_id: seq.id, data: { code: 'sq2' } },
    ];
    const [answer] = await Promise.all([batch(requests), ...singles]);
    expect(answer.results).toHaveLength(61);
    const ids = answer.results.map((r) => r.id as string);
    const mine = async () =>
      (await stream.all()).filter((e) => ids.includes(e.payload.entity_id) && (e.payload.entity_type === 'Shot' || e.payload.action === 'update'));
    let events = await mine();
    for (let i = 0; i < 50 && events.length < 61; i++) {
      await new Promise((r) => setTimeout(r, 100));
      events = await mine();
    }
    expect(events.map((e) => e.payload.entity_id)).toEqual(ids);
    // One message: one stream sequence, on the batch subject.
    expect(new Set(events.map((e) => e.seq)).size).toBe(1);
    expect(events[0]!.subject).toBe(`${world.prefix}events.batch`);
    expect(events[60]!.payload).toMatchObject({ action: 'update', changes: { code: 'sq2' } });
    // Every event's occurred_at is its record's updated_at.
    for (const [i, e] of events.entries()) expect(e.payload.occurred_at).toBe(answer.results[i].updated_at);
  });
});

describe('summaries', () => {
  it('a grouping of more than 10,000 groups is a 422 at grouping, read from at most one row more than allowed', async () => {
    // 10,001 shots of a project of their own, written directly: one group each when grouped by code.
    const project = newId();
    await world.sql.query(
      `insert into records.record (id, entity_type, project_id, created_at, updated_at, data)
       select gen_random_uuid(), 'Shot', $1::uuid, now(), now(), jsonb_build_object('code', 'g' || i, 'cut_in', i % 7)
         from generate_series(1, 10001) i`,
      [project],
    );
    const summarize = (grouping: unknown) =>
      world.client.call.summarizeRecords(
        {
          entityType: 'Shot',
          filtersJson: JSON.stringify([['project_id', 'is', project]]),
          summaryFieldsJson: JSON.stringify([{ field: 'id', type: 'record_count' }]),
          groupingJson: JSON.stringify(grouping),
        },
        viewer,
      );
    const refused = await appErrorOf(summarize([{ field: 'code', type: 'exact' }]));
    expect(refused.kind).toBe('invalid');
    expect(refused.problems).toEqual([expect.objectContaining({ loc: ['grouping'], type: 'too_many_groups' })]);
    // A coarser grouping of the same records answers.
    const coarse = JSON.parse((await summarize([{ field: 'cut_in', type: 'exact' }])).json);
    expect(coarse.summaries.id).toBe(10_001);
    expect(coarse.groups).toHaveLength(7);
    await world.sql.query(`delete from records.record where project_id = $1`, [project]);
  });

  it('summarizes and groups in SQL, the group without a value last', async () => {
    const made = await batch([
      shot('s1', { cut_in: 10, due: '2026-01-02' }),
      shot('s2', { cut_in: 20, due: '2026-01-30' }),
      shot('s3', { cut_in: 40, due: '2026-02-01' }),
      shot('s4'),
    ]);
    const ids = made.results.map((r) => r.id);
    const summarize = async (summaryFields: unknown, grouping?: unknown) =>
      JSON.parse(
        (
          await world.client.call.summarizeRecords(
            {
              entityType: 'Shot',
              filtersJson: JSON.stringify([['id', 'in', ids]]),
              summaryFieldsJson: JSON.stringify(summaryFields),
              groupingJson: grouping === undefined ? undefined : JSON.stringify(grouping),
            },
            viewer,
          )
        ).json,
      );
    const ok = await summarize([
      { field: 'cut_in', type: 'average' },
      { field: 'id', type: 'record_count' },
      { field: 'due', type: 'latest' },
    ]);
    expect(ok.summaries).toEqual({ cut_in: 70 / 3, id: 4, due: '2026-02-01' });
    const byMonth = await summarize([{ field: 'cut_in', type: 'sum' }], [{ field: 'due', type: 'month' }]);
    expect(byMonth.groups).toEqual([
      { group_name: '2026-01', group_value: '2026-01', summaries: { cut_in: 30 } },
      { group_name: '2026-02', group_value: '2026-02', summaries: { cut_in: 40 } },
      { group_name: null, group_value: null, summaries: { cut_in: 0 } },
    ]);
    const dup = await appErrorOf(
      world.client.call.summarizeRecords(
        {
          entityType: 'Shot',
          summaryFieldsJson: JSON.stringify([
            { field: 'cut_in', type: 'sum' },
            { field: 'cut_in', type: 'maximum' },
          ]),
        },
        viewer,
      ),
    );
    expect(dup.problems.map((p) => p.loc)).toEqual([['summary_fields', 1, 'field']]);
  });
});
