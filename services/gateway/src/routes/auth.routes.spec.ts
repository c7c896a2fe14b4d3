import { AppError } from '@reelbase/lib-platform';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const MISSING = '0190a0b0-0000-7000-8000-0000000000ff';

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.failNext.clear();
  gw.state.calls.length = 0;
});

/** The calls behind the answer (a cached principal makes no authenticate call). */
const methods = () => gw.state.calls.map((c) => c.method).filter((m) => m !== 'authenticate');

describe('User writes that carry a login address go through auth', () => {
  it('POST /entities/User is written by auth, which reserves data.email', async () => {
    const r = await call('POST', '/entities/User', { token: 'admin-token', body: { data: { name: 'New', email: 'new@studio.test' } } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ entity_type: 'User', data: { name: 'New', email: 'new@studio.test' } });
    expect(methods()).toEqual(['createUser', 'createRecord']);
    const req = gw.state.calls[1]!.req as { record: { entityType: string; dataJson: string } };
    expect(req.record.entityType).toBe('User');
    expect(JSON.parse(req.record.dataJson)).toEqual({ name: 'New', email: 'new@studio.test' });
    expect(gw.state.calls[1]!.ctx.principal).toMatchObject({ userId: USERS.admin.id, role: 'Admin' });
  });

  it("a taken address is 409 duplicate_code; auth's problems are located in the body", async () => {
    gw.state.failNext.set('createUser', AppError.conflict('duplicate_code', 'a user with this email already exists (the email is the login code)'));
    const dup = await call('POST', '/entities/User', { token: 'admin-token', body: { data: { email: 'boss@studio.test' } } });
    expect(dup.status).toBe(409);
    expect(dup.json).toEqual({ detail: expect.any(String), code: 'duplicate_code' });
    gw.state.failNext.set('updateUser', AppError.invalid([{ loc: ['data', 'email'], msg: 'value is not a valid email address', type: 'value_error' }]));
    const bad = await call('PATCH', `/entities/User/${USERS.artist.id}`, { token: 'admin-token', body: { data: { email: 'nope' } } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail).toEqual([{ loc: ['body', 'data', 'email'], msg: 'value is not a valid email address', type: 'value_error' }]);
  });

  it('PATCH goes through auth only when data sets email (null included)', async () => {
    const user = await call('POST', '/entities/User', { token: 'admin-token', body: { data: { name: 'U', email: 'u@studio.test' } } });
    gw.state.calls.length = 0;
    expect((await call('PATCH', `/entities/User/${user.json.id}`, { token: 'admin-token', body: { data: { email: 'moved@studio.test' } } })).status).toBe(200);
    expect(methods()).toEqual(['updateUser', 'updateRecord']);
    gw.state.calls.length = 0;
    expect((await call('PATCH', `/entities/User/${user.json.id}`, { token: 'admin-token', body: { data: { email: null } } })).status).toBe(200);
    expect(methods()).toEqual(['updateUser', 'updateRecord']);
    gw.state.calls.length = 0;
    expect((await call('PATCH', `/entities/User/${user.json.id}`, { token: 'admin-token', body: { data: { name: 'Renamed' } } })).status).toBe(200);
    expect(methods()).toEqual(['updateRecord']);
    gw.state.calls.length = 0;
    const shot = await call('POST', '/entities/Shot', { token: 'admin-token', body: { project_id: MISSING, data: { email: 'x@studio.test' } } });
    expect(shot.status).toBe(200);
    expect(methods()).toEqual(['createRecord']);
  });

  it('non-Admins are refused before auth is asked', async () => {
    for (const token of ['supervisor-token', 'artist-token', 'viewer-token']) {
      expect((await call('POST', '/entities/User', { token, body: { data: { email: 'x@studio.test' } } })).status).toBe(403);
      expect((await call('PATCH', `/entities/User/${USERS.artist.id}`, { token, body: { data: { email: 'x@studio.test' } } })).status).toBe(403);
    }
    expect(methods()).toEqual([]);
  });
});

describe('POST /auth/password', () => {
  it("changes the caller's own password", async () => {
    const r = await call('POST', '/auth/password', { token: 'artist-token', body: { old_password: 'correct horse', new_password: 'battery staple' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user_id: USERS.artist.id, password_set: true });
    const req = gw.state.calls.find((c) => c.method === 'changePassword')!;
    expect(req.req).toEqual({ oldPassword: 'correct horse', newPassword: 'battery staple' });
    expect(req.ctx.principal).toMatchObject({ userId: USERS.artist.id });
  });

  it('a wrong old password is 403; no token 401; bad bodies 422 before auth is asked', async () => {
    const wrong = await call('POST', '/auth/password', { token: 'artist-token', body: { old_password: 'guess', new_password: 'battery staple' } });
    expect(wrong.status).toBe(403);
    expect(wrong.json).toEqual({ detail: 'the old password is wrong', code: 'forbidden' });
    expect((await call('POST', '/auth/password', { body: { old_password: 'correct horse', new_password: 'battery staple' } })).status).toBe(401);
    gw.state.calls.length = 0;
    const bad = await call('POST', '/auth/password', { token: 'artist-token', body: { new_password: 'short', extra: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((p: { loc: unknown[]; type: string }) => [p.loc, p.type])).toEqual(
      expect.arrayContaining([
        [['body', 'old_password'], 'missing'],
        [['body', 'new_password'], 'string_too_short'],
        [['body', 'extra'], 'extra_forbidden'],
      ]),
    );
    expect(methods()).not.toContain('changePassword');
  });
});

describe('PUT /auth/users/{id}/password', () => {
  it("an Admin sets anyone's password", async () => {
    const r = await call('PUT', `/auth/users/${USERS.artist.id.toUpperCase()}/password`, { token: 'admin-token', body: { password: 'battery staple' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user_id: USERS.artist.id, password_set: true });
    expect(gw.state.calls.find((c) => c.method === 'setPassword')!.req).toEqual({ userId: USERS.artist.id, password: 'battery staple' });
  });

  it('403 for everyone else (before the body is looked at), 404 for an unknown user, 422 by the rules of register', async () => {
    for (const token of ['supervisor-token', 'artist-token', 'viewer-token', 'svc_artist']) {
      const r = await call('PUT', `/auth/users/${USERS.artist.id}/password`, { token, body: { password: 'x' } });
      expect([token, r.status, r.json.code]).toEqual([token, 403, 'forbidden']);
    }
    expect(methods()).not.toContain('setPassword');
    expect((await call('PUT', `/auth/users/${MISSING}/password`, { token: 'admin-token', body: { password: 'battery staple' } })).status).toBe(404);
    const short = await call('PUT', '/auth/users/nope/password', { token: 'admin-token', body: { password: 'short' } });
    expect(short.status).toBe(422);
    expect(short.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual([
      ['path', 'id'],
      ['body', 'password'],
    ]);
  });

  it('both routes are in the OpenAPI document', async () => {
    const doc = (await call('GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths['/auth/users/{id}/password'])).toEqual(['put']);
    expect(Object.keys(doc.paths['/auth/password'])).toEqual(['post']);
    expect(doc.paths['/auth/users/{id}/password'].put.responses).toHaveProperty('403');
  });
});

describe('credentials that end', () => {
  it('POST /auth/api-keys passes expires_at on; a malformed one is 422 before auth is asked', async () => {
    const at = new Date(Date.now() + 3600_000).toISOString();
    const r = await call('POST', '/auth/api-keys', { token: 'artist-token', body: { name: 'ci', expires_at: at } });
    expect(r.status).toBe(200);
    expect(r.json.expires_at).toBe(at);
    expect((gw.state.calls.find((c) => c.method === 'issueApiKey')!.req as { expiresAt?: string }).expiresAt).toBe(at);
    gw.state.calls.length = 0;
    const bad = await call('POST', '/auth/api-keys', { token: 'artist-token', body: { name: 'ci', expires_at: 'next week' } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['body', 'expires_at']);
    expect(methods()).toEqual([]);
  });

  it('GET /auth/api-keys?user_id= asks auth for that user; a malformed id is 422', async () => {
    const r = await call('GET', `/auth/api-keys?user_id=${USERS.artist.id}`, { token: 'admin-token' });
    expect(r.status).toBe(200);
    expect(r.json.items[0].user_id).toBe(USERS.artist.id);
    expect(gw.state.calls.find((c) => c.method === 'listApiKeys')!.req).toEqual({ userId: USERS.artist.id });
    expect((await call('GET', '/auth/api-keys?user_id=nope', { token: 'admin-token' })).status).toBe(422);
  });

  it('POST /auth/signing-keys/rotate takes an optional {"retire_previous": true}', async () => {
    const seen: unknown[] = [];
    const off = gw.bus.subscribe('revocation', (r) => seen.push(r));
    const plain = await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token' });
    expect(plain.json).toEqual({ kid: 'k', retired: 1 });
    expect(seen).toEqual([]);
    const emergency = await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token', body: { retire_previous: true } });
    off();
    expect(emergency.json).toEqual({ kid: 'k', retired: 2 });
    // This gateway forgets every login token before it answers.
    expect(seen).toEqual([{ all_tokens: true }]);
    const reqs = gw.state.calls.filter((c) => c.method === 'rotateSigningKey').map((c) => c.req);
    expect(reqs).toEqual([{ retirePrevious: false }, { retirePrevious: true }]);
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token', body: { retire_previous: 'yes' } })).status).toBe(422);
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'supervisor-token', body: { retire_previous: true } })).status).toBe(403);
  });

  it('POST /auth/users/{id}/revoke-sessions: Admin only, and this gateway forgets the user at once', async () => {
    expect((await call('POST', `/auth/users/${USERS.artist.id}/revoke-sessions`, { token: 'supervisor-token' })).status).toBe(403);
    expect(methods()).toEqual([]);
    const seen: unknown[] = [];
    const off = gw.bus.subscribe('revocation', (r) => seen.push(r));
    const r = await call('POST', `/auth/users/${USERS.artist.id}/revoke-sessions`, { token: 'admin-token' });
    off();
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ user_id: USERS.artist.id, api_keys_revoked: 1, tokens_revoked_before: expect.any(String) });
    expect(seen).toContainEqual({ user_id: USERS.artist.id });
    expect((await call('POST', `/auth/users/${MISSING}/revoke-sessions`, { token: 'admin-token' })).status).toBe(404);
  });
});
