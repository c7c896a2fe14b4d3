/**
 * Hostile-client defences of the HTTP surface: User writes take effect on the next request,
 * rate-limit buckets per principal, anonymous registration after bootstrap, short 422s for
 * huge bodies, refused tokens (negative cache, per-address limit) and logins per address.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';

describe('gateway hardening', () => {
  let gw: TestGateway;
  const call = httpClient(() => gw.url);

  describe('with default limits', () => {
    beforeAll(async () => {
      gw = await startTestGateway({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3', LOGIN_RATE_PER_MINUTE: '3', AUTH_FAILURE_RPS: '1', AUTH_FAILURE_BURST: '4' });
    });
    afterAll(async () => {
      await gw.stop();
    });
    beforeEach(() => {
      gw.state.calls.length = 0;
    });

    it('a User write through this gateway is seen by the very next request (demoted, disabled, retired)', async () => {
      const sup = USERS.supervisor;
      gw.state.records.set(sup.id, {
        id: sup.id,
        entityType: 'User',
        active: true,
        createdAt: 't',
        updatedAt: 't',
        dataJson: JSON.stringify({ email: 'supervisor@example.com', role: 'Supervisor' }),
      });
      gw.state.tokens.set('sup-2', { userId: sup.id, role: 'Supervisor', authKind: 'token', email: 's@example.com', cacheSeconds: 60 });
      // Warm the cache (60 s from auth, AUTH_CACHE_SECONDS 5).
      expect((await call('POST', '/entities/Shot', { token: 'sup-2', body: { project_id: PROJECT, data: { code: 'a' } } })).status).toBe(200);

      // auth now answers Viewer (the record changed); the Admin's PATCH must drop the cached principal.
      gw.state.tokens.set('sup-2', { ...gw.state.tokens.get('sup-2')!, role: 'Viewer' });
      expect((await call('PATCH', `/entities/User/${sup.id}`, { token: 'admin-token', body: { data: { role: 'Viewer' } } })).status).toBe(200);
      const demoted = await call('POST', '/entities/Shot', { token: 'sup-2', body: { project_id: PROJECT, data: { code: 'b' } } });
      expect(demoted.status).toBe(403);

      // Retired: auth refuses the token from now on; the very next request is 401.
      gw.state.tokens.delete('sup-2');
      expect((await call('DELETE', `/entities/User/${sup.id}`, { token: 'admin-token' })).status).toBe(200);
      expect((await call('GET', '/me', { token: 'sup-2' })).status).toBe(401);
    });

    it('keys rate-limit buckets by principal, not by how the token is spelled', async () => {
      // Three spellings of one artist's credential (as a verifier accepting variants would see them).
      for (const t of ['art-a', 'art-b', 'art-c', 'art-d']) gw.state.tokens.set(t, { ...gw.state.tokens.get('artist-token')! });
      const statuses = [];
      for (const t of ['art-a', 'art-b', 'art-c', 'art-d']) statuses.push((await call('GET', '/auth/api-keys', { token: t })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      // Another user, and the artist's API key, have buckets of their own.
      expect((await call('GET', '/auth/api-keys', { token: 'viewer-token' })).status).toBe(200);
      expect((await call('GET', '/auth/api-keys', { token: 'svc_artist' })).status).toBe(200);
    });

    it('an anonymous register after bootstrap is 403 before its body is validated, and auth is asked once', async () => {
      gw.state.bootstrapped = false;
      const before = await call('POST', '/auth/register', { body: { email: 'nope' } });
      expect(before.status).toBe(422);
      gw.state.bootstrapped = true;
      for (const body of [{ email: 'nope' }, { email: 'a@b.c', password: 'long enough', name: 'A' }]) {
        const res = await call('POST', '/auth/register', { body });
        expect(res.status).toBe(403);
        expect(res.json).toMatchObject({ code: 'forbidden' });
      }
      expect((await call('POST', '/auth/register', { raw: '{"email":' })).status).toBe(403);
      // Once done, the fact is kept: no further call to auth.
      expect(gw.state.calls.filter((c) => c.method === 'getBootstrap')).toHaveLength(2);
      expect(gw.state.calls.filter((c) => c.method === 'register')).toHaveLength(0);
    });

    it('lists at most MAX_PROBLEMS problems in a 422 and says how many more there were', async () => {
      const body: Record<string, unknown> = { data: { code: 'x' } };
      for (let i = 0; i < 30_000; i++) body[`k${i}`] = i;
      const res = await call('POST', '/entities/Project', { token: 'admin-token', body });
      expect(res.status).toBe(422);
      expect(res.text.length).toBeLessThan(20_000);
      expect(res.json.detail).toHaveLength(101);
      expect(res.json.detail[0]).toEqual({ loc: ['body', 'k0'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      expect(res.json.detail[100]).toEqual({ loc: ['body'], msg: '29900 more problems not listed (at most 100 are)', type: 'too_many_errors' });
    });

    it('answers a refused token again from a short negative cache, and limits refused tokens per client address', async () => {
      // A gateway of its own, so the refusals of other tests do not count here.
      const own = await startTestGateway({ AUTH_FAILURE_RPS: '1', AUTH_FAILURE_BURST: '4' });
      const shared = gw;
      gw = own;
      try {
        await refusedTokens();
      } finally {
        gw = shared;
        await own.stop();
      }
    });

    async function refusedTokens() {
      expect((await call('GET', '/me', { token: 'admin-token' })).status).not.toBe(401);
      gw.state.calls.length = 0;
      const first = await call('GET', '/me', { token: 'forged-1' });
      expect(first.status).toBe(401);
      expect((await call('GET', '/me', { token: 'forged-1' })).status).toBe(401);
      expect(gw.state.calls.filter((c) => c.method === 'authenticate')).toHaveLength(1);
      // Burst of 4 refusals per address: two used above, two more, then 429 without asking auth.
      expect((await call('GET', '/me', { token: 'forged-2' })).status).toBe(401);
      expect((await call('GET', '/me', { token: 'forged-3' })).status).toBe(401);
      const limited = await call('GET', '/me', { token: 'forged-4' });
      expect(limited.status).toBe(429);
      expect(limited.json).toMatchObject({ code: 'rate_limited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(gw.state.calls.filter((c) => c.method === 'authenticate')).toHaveLength(3);
      // A token already known to be valid (cached) still passes from the same address.
      expect((await call('GET', '/me', { token: 'admin-token' })).status).not.toBe(429);
    }

    it('limits login attempts per client address; successful logins do not count', async () => {
      for (let i = 0; i < 5; i++) {
        expect((await call('POST', '/auth/login', { body: { email: 'a@studio.io', password: 'correct horse' } })).status).toBe(200);
      }
      for (let i = 0; i < 3; i++) {
        expect((await call('POST', '/auth/login', { body: { email: `u${i}@studio.io`, password: 'wrong' } })).status).toBe(401);
      }
      const limited = await call('POST', '/auth/login', { body: { email: 'u9@studio.io', password: 'wrong' } });
      expect(limited.status).toBe(429);
      expect(limited.json).toMatchObject({ code: 'rate_limited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(gw.state.calls.filter((c) => c.method === 'login')).toHaveLength(8);
    });
  });

  describe('with a proxy in front', () => {
    beforeAll(async () => {
      gw = await startTestGateway({ LOGIN_RATE_PER_MINUTE: '1', TRUST_PROXY_HOPS: '1' });
    });
    afterEach(() => {
      gw.state.calls.length = 0;
    });
    afterAll(async () => {
      await gw.stop();
    });

    it('tells clients apart by the X-Forwarded-For entry the trusted proxy added', async () => {
      const login = (xff: string) => call('POST', '/auth/login', { body: { email: 'a@studio.io', password: 'wrong' }, headers: { 'x-forwarded-for': xff } });
      expect((await login('203.0.113.7')).status).toBe(401);
      expect((await login('203.0.113.7')).status).toBe(429);
      // A client cannot pick a fresh bucket by prepending its own entries.
      expect((await login('198.51.100.1, 203.0.113.7')).status).toBe(429);
      expect((await login('203.0.113.8')).status).toBe(401);
    });
  });
});
