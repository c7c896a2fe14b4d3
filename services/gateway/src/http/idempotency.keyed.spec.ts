/**
 * A write that carries its Idempotency-Key (`RouteDef.keyInWrite`: a record create, a batch;
 * docs/architecture.md, "Idempotency keys"): one records call claims the key, writes and stores the
 * answer, so the key costs no call of its own; the key's outcome records answers instead of a
 * result is mapped as a claim's is. Other POSTs still claim and finish their key around the route.
 * Through a gateway over fake peers whose records answer queued key outcomes, counting the calls.
 */
import { idempotencyv1, type recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import { KEEP_MS, LEASE_MS, MAX_KEYS } from './idempotency.js';

const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;
type ClaimResponse = idempotencyv1.IdempotencyServiceClaimResponse;
const P = '0190a0b0-0000-7000-8000-0000000000a1';
const JSON_TYPE = 'application/json; charset=utf-8';

let gw: TestGateway;
const call = httpClient(() => gw.url);
/** What records answers for the next keyed writes instead of writing (a key's outcome), in order. */
const outcomes: ClaimResponse[] = [];
/** IdempotencyService calls, by method. */
const keyCalls: string[] = [];

beforeAll(async () => {
  gw = await startTestGateway({}, (peers, state) => ({
    ...peers,
    records: {
      ...peers.records,
      createRecord: async (req: recordsv1.CreateRecordRequest, ctx) => {
        const key = req.keyed ? outcomes.shift() : undefined;
        if (!key) return peers.records.createRecord(req, ctx);
        state.calls.push({ method: 'createRecord', req, ctx });
        return { key };
      },
      batchRecords: async (req: recordsv1.BatchRecordsRequest, ctx) => {
        state.calls.push({ method: 'batchRecords', req, ctx });
        const key = req.keyed ? outcomes.shift() : undefined;
        return key ? { json: '', key } : { json: '{"results":[true]}' };
      },
    },
    idempotency: {
      claim: async () => {
        keyCalls.push('claim');
        return { outcome: Outcome.OUTCOME_CLAIMED, claim: 'c1', retryAfterMs: 0 };
      },
      finish: async () => {
        keyCalls.push('finish');
        return { stored: true };
      },
      release: async () => {
        keyCalls.push('release');
        return {};
      },
    } as unknown as typeof peers.idempotency,
  }));
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
  keyCalls.length = 0;
  outcomes.length = 0;
});

const RECORDS_WRITES = new Set(['createRecord', 'batchRecords', 'reviveRecord']);
/** The records writes the gateway made, in order. */
const writes = () => gw.state.calls.filter((c) => RECORDS_WRITES.has(c.method));
const createShot = (key: string, data: Record<string, unknown> = { code: 'a' }) =>
  call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: P, data }, headers: { 'idempotency-key': key } });
const answerOf = (status: number, body: string, etag?: string): ClaimResponse => ({
  outcome: Outcome.OUTCOME_REPLAY,
  claim: '',
  retryAfterMs: 0,
  answer: { status, headersJson: JSON.stringify({ 'content-type': JSON_TYPE, ...(etag ? { etag } : {}) }), body },
});

describe('a write that carries its Idempotency-Key', () => {
  it('a keyed create is one records call and no IdempotencyService call; the call carries the whole claim', async () => {
    const res = await createShot('one-trip');
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(keyCalls).toEqual([]);
    expect(writes().map((c) => c.method)).toEqual(['createRecord']);
    const req = writes()[0]!.req as recordsv1.CreateRecordRequest;
    expect(req.keyed).toEqual({
      claim: {
        scope: expect.stringMatching(/^[0-9a-f]{64}$/),
        bodyHash: expect.stringMatching(/^[0-9a-f]{64}$/),
        leaseMs: LEASE_MS,
        keepMs: KEEP_MS,
        principal: `user:${USERS.artist.id}`,
        maxKeys: MAX_KEYS,
      },
      pathParams: ['entity_type'],
      queryParams: [],
    });
    expect(req.idempotency).toBeUndefined();
  });

  it('a keyed batch is one records call too, naming its query parameters; a POST that does not carry its key claims and finishes it', async () => {
    const res = await call('POST', '/batch?trace=1', {
      token: 'artist-token',
      body: { requests: [{ request_type: 'delete', entity_type: 'Shot', entity_id: P }] },
      headers: { 'idempotency-key': 'batch-1' },
    });
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"results":[true]}');
    expect(keyCalls).toEqual([]);
    expect(writes().map((c) => (c.req as recordsv1.BatchRecordsRequest).keyed)).toEqual([expect.objectContaining({ pathParams: [], queryParams: ['trace'] })]);

    const shot = (await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: P, data: { code: 'r' } } })).json;
    gw.state.calls.length = 0;
    const revived = await call('POST', `/entities/Shot/${shot.id}/revive`, { token: 'artist-token', headers: { 'idempotency-key': 'revive-1' } });
    expect(revived.status).toBe(200);
    expect(keyCalls).toEqual(['claim', 'finish']);
    expect(writes().map((c) => c.method)).toEqual(['reviveRecord']);
  });

  it('the stored answer records gives back is sent again as it is, marked replayed', async () => {
    const body = '{"id":"x","stored":true}';
    outcomes.push(answerOf(200, body, '"2026-01-01T00:00:00.000000Z"'));
    const res = await createShot('replayed');
    expect(res.status).toBe(200);
    expect(res.text).toBe(body);
    expect(res.headers.get('etag')).toBe('"2026-01-01T00:00:00.000000Z"');
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    expect(writes()).toHaveLength(1);
    expect(keyCalls).toEqual([]);
  });

  it('another body is 409 idempotency_conflict; too many keys is 429 with Retry-After', async () => {
    outcomes.push({ outcome: Outcome.OUTCOME_CONFLICT, claim: '', retryAfterMs: 0 });
    const conflict = await createShot('conflict');
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe('idempotency_conflict');
    outcomes.push({ outcome: Outcome.OUTCOME_LIMITED, claim: '', retryAfterMs: 90_500 });
    const limited = await createShot('limited');
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('91');
    expect(writes()).toHaveLength(2);
  });

  it('a key still in flight is looked at again by the same one call, after a pause, until its answer is there', async () => {
    const inFlight = { outcome: Outcome.OUTCOME_IN_FLIGHT, claim: '', retryAfterMs: 0 };
    outcomes.push(inFlight, inFlight, answerOf(422, '{"detail":[]}'));
    const started = Date.now();
    const res = await createShot('in-flight');
    expect(res.status).toBe(422);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    expect(writes().map((c) => c.method)).toEqual(['createRecord', 'createRecord', 'createRecord']);
    // Pauses of 100 and 200 ms between the looks.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(keyCalls).toEqual([]);
  });

  it('a client mistake records refused is answered as it is; records kept it, so nothing is finished or released here', async () => {
    const res = await createShot('mistake', { bad_field: 1 });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].loc).toEqual(['body', 'data', 'bad_field']);
    expect(keyCalls).toEqual([]);
    expect(writes()).toHaveLength(1);
  });
});
