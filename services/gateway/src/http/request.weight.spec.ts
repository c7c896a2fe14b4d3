/**
 * What an Idempotency-Key stores and what a request weighs, through a gateway over fake peers
 * that keep no idempotency keys: a route whose answer is stored needs the store (503 without
 * it), one whose answer is read-only or holds a lease checks the key and runs without it; and a
 * request that does the work of many takes its weight from the caller's rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const P = '0190a0b0-0000-7000-8000-0000000000a1';
const rep = (i: number) => `0190a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`;

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '20' });
});
afterAll(async () => {
  await gw.stop();
});

describe('Idempotency-Key answers kept', () => {
  it('read-only and lease-holding POSTs check the key and run without storing; a write needs the store', async () => {
    const key = { 'idempotency-key': 'retry-1' };
    const query = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: [] }, headers: key });
    expect(query.status).toBe(200);
    gw.state.sitesyncAnswers = new Map([['claimStates', { items: [] }]]);
    const claim = await call('POST', '/sitesync/claim', { token: 'artist-token', body: { site: 'paris', agent: 'box-1' }, headers: key });
    expect(claim.status).toBe(200);
    // The key is still checked.
    const bad = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: [] }, headers: { 'idempotency-key': 'clé' } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['header', 'idempotency-key']);
    // A create's answer is kept, and this gateway has nowhere to keep it.
    const create = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: P, data: { code: 'a' } }, headers: key });
    expect(create.status).toBe(503);
  });
});

describe('request weights', () => {
  it('a request naming many records takes its weight after validation, so the next waits for the refill', async () => {
    // Site-sync requests weigh one per 10 representations: 150 ids weigh 15 of the 20 in the bucket.
    const body = { site: 'paris', representation_ids: Array.from({ length: 150 }, (_, i) => rep(i + 1)) };
    gw.state.sitesyncAnswers = new Map([['requestSync', { queued: 150, unchanged: 0 }]]);
    expect((await call('POST', '/sitesync/requests', { token: 'supervisor-token', body })).status).toBe(200);
    // One token is left over, so this one is admitted too, and borrows the rest.
    expect((await call('POST', '/sitesync/requests', { token: 'supervisor-token', body })).status).toBe(200);
    const refused = await call('GET', '/sitesync/sites', { token: 'supervisor-token' });
    expect(refused.status).toBe(429);
    // 10 tokens short at 1 per second.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(10);
    // A refused body weighs one request only: validation comes after the first token, the rest is not taken.
    expect((await call('POST', '/sitesync/requests', { token: 'coordinator-token', body: { ...body, site: 'Bad Code' } })).status).toBe(422);
    expect((await call('GET', '/sitesync/sites', { token: 'coordinator-token' })).status).not.toBe(429);
  });
});
