/**
 * Credentials that end, against the whole stack (docs/api-notes.md, Authentication): an API key
 * with `expires_at` stops working then; an Admin lists and revokes another user's keys; "revoke
 * every session" logs a user out everywhere (token and keys 401, live WebSockets closed 1008);
 * a WebSocket whose key was revoked while the revocation message got lost is closed by its own
 * re-check (WS_PRINCIPAL_RECHECK_MS, short here); an emergency signing-key rotation refuses every
 * login token and leaves API keys working.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import { openEventSocket } from './support/ws.client.js';

const RECHECK_MS = 1500;

describe('credentials that end (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  const newKey = async (api: Api, body: Record<string, unknown>) => expectStatus(await api.post('/auth/api-keys', body), 200, 'issue key');
  const within = async (ms: number, p: Promise<{ code: number; reason: string }>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`socket still open after ${ms} ms`)), ms))]);

  beforeAll(async () => {
    e = await startE2EStack('credentials', { gateway: { WS_PRINCIPAL_RECHECK_MS: String(RECHECK_MS) } });
    admin = await bootstrapAdmin(e.api);
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('an API key with expires_at works until then and answers 401 after; a past expiry is 422', async () => {
    const art = await createUser(admin.api, 'Artist', 'expiring@studio.test');
    expectValidation(await art.api.post('/auth/api-keys', { name: 'old', expires_at: '2020-01-01T00:00:00Z' }), ['body', 'expires_at']);
    expectValidation(await art.api.post('/auth/api-keys', { name: 'bad', expires_at: 'soon' }), ['body', 'expires_at']);
    const expiresAt = new Date(Date.now() + 3000).toISOString();
    const key = await newKey(art.api, { name: 'short-lived', expires_at: expiresAt });
    expect(key.expires_at).toBe(expiresAt);
    const listed = expectStatus(await art.api.get('/auth/api-keys'), 200).items;
    expect(listed.find((k: { id: string }) => k.id === key.id)).toMatchObject({ expires_at: expiresAt, user_id: art.user.id });
    // In use (and so in the gateway's cache) right up to the end.
    expectStatus(await e.api.as(key.token).get('/me'), 200, 'before expiry');
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() - 700));
    expectStatus(await e.api.as(key.token).get('/me'), 200, 'just before expiry');
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 50));
    expectError(await e.api.as(key.token).get('/me'), 401, 'unauthenticated');
  });

  it("an Admin lists and revokes another user's keys; others get 403 for the list and 404 for the key", async () => {
    const art = await createUser(admin.api, 'Artist', 'keyholder@studio.test');
    const sup = await createUser(admin.api, 'Supervisor', 'nosy@studio.test');
    const key = await newKey(art.api, { name: 'render farm' });
    const listed = expectStatus(await admin.api.get(`/auth/api-keys?user_id=${art.user.id}`), 200, 'Admin lists').items;
    expect(listed.map((k: { id: string }) => k.id)).toEqual([key.id]);
    expect(JSON.stringify(listed)).not.toContain(key.token);
    expectError(await sup.api.get(`/auth/api-keys?user_id=${art.user.id}`), 403, 'forbidden');
    expectError(await sup.api.delete(`/auth/api-keys/${key.id}`), 404, 'not_found');
    expectStatus(await e.api.as(key.token).get('/me'), 200, 'key in use');
    expect(expectStatus(await admin.api.delete(`/auth/api-keys/${key.id}`), 200, 'Admin revokes')).toEqual({ id: key.id, revoked: true });
    expectError(await e.api.as(key.token).get('/me'), 401, 'unauthenticated');
    expect(expectStatus(await admin.api.get(`/auth/api-keys?user_id=${art.user.id}`), 200).items).toEqual([]);
  });

  it('revoke-sessions logs the user out everywhere: token and keys 401, live WebSockets closed 1008', async () => {
    const art = await createUser(admin.api, 'Artist', 'leaver@studio.test');
    const key = await newKey(art.api, { name: 'laptop' });
    const byToken = openEventSocket(e.stack.url, art.token);
    const byKey = openEventSocket(e.stack.url, key.token);
    await Promise.all([byToken.opened, byKey.opened]);
    expectError(await art.api.post(`/auth/users/${art.user.id}/revoke-sessions`), 403, 'forbidden');
    const res = expectStatus(await admin.api.post(`/auth/users/${art.user.id}/revoke-sessions`), 200, 'revoke sessions');
    expect(res).toMatchObject({ user_id: art.user.id, api_keys_revoked: 1 });
    expectError(await art.api.get('/me'), 401, 'unauthenticated');
    expectError(await e.api.as(key.token).get('/me'), 401, 'unauthenticated');
    for (const s of [byToken, byKey]) expect((await within(RECHECK_MS, s.closed)).code).toBe(1008);
    // The Admin is untouched; the user may log in again (a second later: tokens of that second are refused).
    expectStatus(await admin.api.get('/me'), 200);
    await new Promise((r) => setTimeout(r, 1100));
    const again = expectStatus(await e.api.post('/auth/login', { email: 'leaver@studio.test', password: 'password-1234' }), 200).access_token;
    expectStatus(await e.api.as(again).get('/me'), 200, 'new login');
  });

  it('a WebSocket whose key was revoked without any revocation message is closed by its own re-check', async () => {
    const art = await createUser(admin.api, 'Artist', 'quiet@studio.test');
    const key = await newKey(art.api, { name: 'dashboard' });
    const socket = openEventSocket(e.stack.url, key.token);
    await socket.opened;
    // Past auth and NATS: as if the message announcing it were lost.
    const db = new pg.Client({ connectionString: e.db.url });
    await db.connect();
    try {
      const r = await db.query('update auth.api_key set revoked_at = now() where id = $1', [key.id]);
      expect(r.rowCount).toBe(1);
    } finally {
      await db.end();
    }
    const closed = await within(RECHECK_MS + 2000, socket.closed);
    expect([closed.code, closed.reason]).toEqual([1008, 'token revoked']);
  });

  it('an emergency rotation refuses every login token at once; API keys keep working', async () => {
    const sup = await createUser(admin.api, 'Supervisor', 'keeps-key@studio.test');
    const key = await newKey(sup.api, { name: 'pipeline' });
    const socket = openEventSocket(e.stack.url, sup.token);
    await socket.opened;
    expectError(await sup.api.post('/auth/signing-keys/rotate', { retire_previous: true }), 403, 'forbidden');
    const rotated = expectStatus(await admin.api.post('/auth/signing-keys/rotate', { retire_previous: true }), 200, 'emergency rotation');
    expect(rotated.retired).toBeGreaterThanOrEqual(1);
    expectError(await admin.api.get('/me'), 401, 'unauthenticated');
    expectError(await sup.api.get('/me'), 401, 'unauthenticated');
    expect((await within(RECHECK_MS, socket.closed)).code).toBe(1008);
    expectStatus(await e.api.as(key.token).get('/me'), 200, 'API key');
    const fresh = expectStatus(await e.api.post('/auth/login', { email: 'admin@studio.test', password: 'correct horse battery' }), 200).access_token;
    expectStatus(await e.api.as(fresh).get('/me'), 200, 'a new login');
  });
});
