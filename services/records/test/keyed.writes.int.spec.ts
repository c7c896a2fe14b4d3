/**
 * Writes that carry their Idempotency-Key (docs/architecture.md, "Idempotency keys") against the
 * real PostgreSQL through records' signed gRPC services: one CreateRecord or BatchRecords call
 * claims the key, writes and stores the answer the gateway sends; a repeat answers the stored
 * answer and writes nothing; another body conflicts; a key still running or a principal past its
 * live keys is said so and nothing runs; a client mistake is kept byte for byte as the gateway
 * answers it; any other failure leaves no key, so a retry runs again.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appErrorAnswer, newId, type AppError, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import { idempotencyv1, type recordsv1 } from '@reelbase/proto';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { idempotencyClientOf, startRecordsWorld, text, type RecordsWorld } from './records.world.js';

const asService: CallContext = { requestId: 'kw-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const admin: CallContext = { requestId: 'kw-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;
const JSON_TYPE = 'application/json; charset=utf-8';

const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
    { code: 'Shot', project_scoped: true, fields: [text('code'), { code: 'cut_in', type: 'integer' }] },
    {
      code: 'Task',
      project_scoped: true,
      fields: [text('name'), text('step'), { code: 'entity', type: 'link' }, { code: 'estimate_minutes', type: 'integer' }],
    },
  ],
  statuses: [{ code: 'wtg' }],
  steps: [{ code: 'anim' }],
  priorities: [],
  transitions: {},
  task_templates: [{ code: 'std', entity_type: 'Shot', tasks: [{ name: 'Anim', step: 'anim' }] }],
};

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

let world: RecordsWorld;
let keys: GrpcClient<idempotencyv1.IdempotencyServiceClient>;
let projectId: string;

beforeAll(async () => {
  world = await startRecordsWorld('keyed_writes');
  await world.client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  keys = idempotencyClientOf(world);
  projectId = (await world.client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'P', code: 'p' }) }, admin)).record!.id;
});

afterAll(async () => {
  keys?.close();
  await world?.stop();
});

/** The key a write carries: `scope` and `body` name its scope and body hash. */
function keyed(scope: string, body: string, principal = 'user:keyed', maxKeys = 10_000, pathParams = ['entity_type']): idempotencyv1.IdempotentWrite {
  return {
    claim: { scope: sha(scope), bodyHash: sha(body), leaseMs: 60_000, keepMs: 86_400_000, principal, maxKeys },
    pathParams,
    queryParams: [],
  };
}

const createShot = (key: idempotencyv1.IdempotentWrite | undefined, data: Record<string, unknown>, extra: Partial<recordsv1.CreateRecordRequest> = {}) =>
  world.client.call.createRecord({ entityType: 'Shot', projectId, dataJson: JSON.stringify(data), keyed: key, ...extra }, admin);
const shot = (code: string, extra: Record<string, unknown> = {}) => ({
  request_type: 'create',
  entity_type: 'Shot',
  project_id: projectId,
  data: { code, ...extra },
});
const batchOf = (key: idempotencyv1.IdempotentWrite | undefined, requests: unknown[]) =>
  world.client.call.batchRecords({ requestsJson: JSON.stringify(requests), keyed: key }, admin);

async function count(sql: string, params: unknown[]): Promise<number> {
  return Number((await world.sql.query<{ n: string }>(sql, params)).rows[0]!.n);
}
const shotsWithCode = (code: string) => count(`select count(*) as n from records.record where entity_type = 'Shot' and data->>'code' = $1`, [code]);
const keyRows = (scope: string) => count(`select count(*) as n from records.idempotency_key where scope = $1`, [sha(scope)]);

/** What the gateway answers for `err` as it arrives there (error.mapper.ts): a create's or a batch's body. */
const gatewayBody = (err: AppError, pathParams: string[]) =>
  JSON.stringify(appErrorAnswer(err, { pathParams: new Set(pathParams), queryParams: new Set(), otherwise: 'body' }).body);

describe('a create that carries its key', () => {
  it('claims, writes and stores the answer in one call; a repeat answers it again and writes nothing', async () => {
    const first = await createShot(keyed('c1', 'a'), { code: 'kc1', cut_in: 3 });
    expect(first.key).toBeUndefined();
    const created = first.record!;
    const again = await createShot(keyed('c1', 'a'), { code: 'kc1', cut_in: 3 });
    expect(again.record).toBeUndefined();
    expect(again.key?.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(again.key!.answer!.status).toBe(200);
    expect(JSON.parse(again.key!.answer!.headersJson)).toEqual({ 'content-type': JSON_TYPE, etag: `"${created.updatedAt}"` });
    expect(JSON.parse(again.key!.answer!.body)).toMatchObject({ id: created.id, entity_type: 'Shot', data: { code: 'kc1', cut_in: 3 } });
    // The same answer through IdempotencyService.Claim (a gateway that claims and finishes).
    expect((await keys.call.claim(keyed('c1', 'a').claim!, asService)).answer).toEqual(again.key!.answer);
    expect(await shotsWithCode('kc1')).toBe(1);
  });

  it('another body is a conflict and writes nothing', async () => {
    await createShot(keyed('c2', 'a'), { code: 'kc2' });
    const other = await createShot(keyed('c2', 'b'), { code: 'kc2-other' });
    expect(other.key?.outcome).toBe(Outcome.OUTCOME_CONFLICT);
    expect(await shotsWithCode('kc2-other')).toBe(0);
  });

  it('a key still running is in flight: nothing runs, and once it is answered the repeat gets that answer', async () => {
    const held = await keys.call.claim(keyed('c3', 'a').claim!, asService);
    expect(held.outcome).toBe(Outcome.OUTCOME_CLAIMED);
    const repeat = await createShot(keyed('c3', 'a'), { code: 'kc3' });
    expect(repeat.key?.outcome).toBe(Outcome.OUTCOME_IN_FLIGHT);
    expect(await shotsWithCode('kc3')).toBe(0);
    const answer = { status: 200, headersJson: JSON.stringify({ 'content-type': JSON_TYPE }), body: '{"first":true}' };
    await keys.call.finish({ scope: sha('c3'), claim: held.claim, answer }, asService);
    expect((await createShot(keyed('c3', 'a'), { code: 'kc3' })).key?.answer).toEqual(answer);
  });

  it('a principal past its live keys is limited: nothing runs, no key is kept, and a known key still answers', async () => {
    const who = 'user:capped';
    for (const i of [0, 1]) expect((await createShot(keyed(`cap${i}`, 'a', who, 2), { code: `kcap${i}` })).record).toBeDefined();
    const refused = await createShot(keyed('cap2', 'a', who, 2), { code: 'kcap2' });
    expect(refused.key?.outcome).toBe(Outcome.OUTCOME_LIMITED);
    expect(refused.key!.retryAfterMs).toBeGreaterThan(23 * 3600 * 1000);
    expect(await shotsWithCode('kcap2')).toBe(0);
    expect(await keyRows('cap2')).toBe(0);
    expect((await createShot(keyed('cap0', 'a', who, 2), { code: 'kcap0' })).key?.outcome).toBe(Outcome.OUTCOME_REPLAY);
  });

  it('a client mistake is kept as the gateway answers it, located like its 422; a repeat answers it again', async () => {
    const err = await appErrorOf(createShot(keyed('c4', 'a'), { code: 'kc4', cut_in: 'no' }));
    expect(err.kind).toBe('invalid');
    const again = await createShot(keyed('c4', 'a'), { code: 'kc4', cut_in: 'no' });
    expect(again.key?.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(again.key!.answer).toEqual({ status: 422, headersJson: JSON.stringify({ 'content-type': JSON_TYPE }), body: gatewayBody(err, ['entity_type']) });
    expect(JSON.parse(again.key!.answer!.body).detail[0].loc).toEqual(['body', 'data', 'cut_in']);
    // A reused id (409) too.
    const id = newId();
    await world.client.call.createRecord({ entityType: 'Shot', projectId, id, dataJson: '{"code":"kc5"}' }, asService);
    const dup = await appErrorOf(
      world.client.call.createRecord({ entityType: 'Shot', projectId, id, dataJson: '{"code":"kc5"}', keyed: keyed('c5', 'a', 'user:svc') }, asService),
    );
    expect(dup.code).toBe('duplicate_id');
    const kept = (await keys.call.claim(keyed('c5', 'a', 'user:svc').claim!, asService)).answer!;
    expect(kept).toMatchObject({ status: 409, body: gatewayBody(dup, ['entity_type']) });
    expect(await shotsWithCode('kc4')).toBe(0);
  });

  it('a failure that is not kept rolls the write back and leaves no key: a retry with the key runs again', async () => {
    await world.sql.query(`create function records.kw_refuse() returns trigger language plpgsql as $$
      begin if new.data->>'code' = 'kc6' then raise exception 'refused by the test'; end if; return new; end $$`);
    await world.sql.query(`create trigger kw_refuse before insert on records.record for each row execute function records.kw_refuse()`);
    try {
      const failed = await appErrorOf(createShot(keyed('c6', 'a'), { code: 'kc6' }));
      expect(failed.kind).toBe('internal');
      expect(await keyRows('c6')).toBe(0);
      expect(await shotsWithCode('kc6')).toBe(0);
    } finally {
      await world.sql.query(`drop trigger kw_refuse on records.record`);
      await world.sql.query(`drop function records.kw_refuse()`);
    }
    const retried = await createShot(keyed('c6', 'a'), { code: 'kc6' });
    expect(retried.record).toBeDefined();
    expect(await shotsWithCode('kc6')).toBe(1);
  });

  it('a create with a task template stores the record as its answer in the template’s transaction', async () => {
    const first = await createShot(keyed('c7', 'a'), { code: 'kc7' }, { taskTemplate: 'std' });
    const again = await createShot(keyed('c7', 'a'), { code: 'kc7' }, { taskTemplate: 'std' });
    expect(again.key?.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(JSON.parse(again.key!.answer!.body).id).toBe(first.record!.id);
    expect(await count(`select count(*) as n from records.record where entity_type = 'Task' and data->'entity'->>'id' = $1`, [first.record!.id])).toBe(1);
  });
});

describe('a batch that carries its key', () => {
  it('stores its answer in its transaction: a repeat answers the same text and writes nothing', async () => {
    const requests = [shot('kb1'), shot('kb2', { cut_in: 2 })];
    const first = await batchOf(keyed('b1', 'a', 'user:keyed', 10_000, []), requests);
    expect(first.key).toBeUndefined();
    expect(JSON.parse(first.json).results).toHaveLength(2);
    const again = await batchOf(keyed('b1', 'a', 'user:keyed', 10_000, []), requests);
    expect(again.key?.outcome).toBe(Outcome.OUTCOME_REPLAY);
    expect(again.key!.answer).toEqual({ status: 200, headersJson: JSON.stringify({ 'content-type': JSON_TYPE }), body: first.json });
    expect(await shotsWithCode('kb2')).toBe(1);
    expect((await batchOf(keyed('b1', 'b', 'user:keyed', 10_000, []), requests)).key?.outcome).toBe(Outcome.OUTCOME_CONFLICT);
  });

  it('a failing request is kept with its index and nothing is written', async () => {
    const requests = [shot('kb3'), { request_type: 'delete', entity_type: 'Shot', entity_id: newId() }];
    const err = await appErrorOf(batchOf(keyed('b2', 'a', 'user:keyed', 10_000, []), requests));
    expect(err.kind).toBe('not_found');
    const again = await batchOf(keyed('b2', 'a', 'user:keyed', 10_000, []), requests);
    expect(again.key!.answer).toEqual({ status: 404, headersJson: JSON.stringify({ 'content-type': JSON_TYPE }), body: gatewayBody(err, []) });
    expect(JSON.parse(again.key!.answer!.body)).toMatchObject({ index: 1, code: 'not_found' });
    expect(await shotsWithCode('kb3')).toBe(0);
  });
});
