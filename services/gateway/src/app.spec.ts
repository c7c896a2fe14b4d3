import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../test/support/fakes.js';
import { httpClient } from '../test/support/http.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
});

const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';

const call = httpClient(() => gw.url);

const createShot = async (token = 'artist-token') => call('POST', '/entities/Shot', { token, body: { project_id: PROJECT, data: { code: 'sh010' } } });

describe('public routes', () => {
  it('healthz answers ok', async () => {
    const r = await call('GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok' });
  });

  it('readyz is 200 when every dependency answers and 503 naming the one that does not', async () => {
    const ok = await call('GET', '/readyz');
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ status: 'ready', checks: { auth: 'ok', records: 'ok', events: 'ok', nats: 'ok' } });
    gw.state.down.add('records');
    const bad = await call('GET', '/readyz');
    expect(bad.status).toBe(503);
    expect(bad.json.code).toBe('unavailable');
    expect(bad.json.detail).toBe('records is not answering');
    expect(bad.json.checks.records).toMatch(/down/);
  });

  it('login maps to the auth call and wrong credentials to 401', async () => {
    const ok = await call('POST', '/auth/login', { body: { email: 'a@example.com', password: 'correct horse' } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ access_token: 'admin-token', token_type: 'bearer', expires_in: 43200 });
    const bad = await call('POST', '/auth/login', { body: { email: 'a@example.com', password: 'nope' } });
    expect(bad.status).toBe(401);
    expect(bad.json.code).toBe('unauthenticated');
  });

  it('register is public, but a sent token must be valid and is passed on as the principal', async () => {
    const first = await call('POST', '/auth/register', { body: { email: 'a@example.com', password: 'long enough', name: 'A' } });
    expect(first.status).toBe(200);
    expect(first.json.access_token).toBe('admin-token');
    expect(first.json.token_type).toBe('bearer');
    expect(first.json.user.entity_type).toBe('User');
    expect(first.json.user.project_id).toBeNull();

    const bad = await call('POST', '/auth/register', { token: 'nope', body: { email: 'b@example.com', password: 'long enough', name: 'B' } });
    expect(bad.status).toBe(401);

    const byViewer = await call('POST', '/auth/register', { token: 'viewer-token', body: { email: 'b@example.com', password: 'long enough', name: 'B' } });
    expect(byViewer.status).toBe(403);
    expect(byViewer.json).toEqual({ detail: 'only an Admin may register users', code: 'forbidden' });

    const byAdmin = await call('POST', '/auth/register', {
      token: 'admin-token',
      body: { email: 'c@example.com', password: 'long enough', name: 'C', role: 'Artist' },
    });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.json.access_token).toBeNull();
    const reg = gw.state.calls.filter((c) => c.method === 'register').at(-1)!;
    expect(reg.ctx.principal?.userId).toBe(USERS.admin.id);
  });

  it('register with a non-Admin token is 403 before any 422; anonymous calls are validated first', async () => {
    const invalid = { email: 'not-an-email', password: 'short', extra: 1 };
    for (const token of ['viewer-token', 'artist-token']) {
      const r = await call('POST', '/auth/register', { token, body: invalid });
      expect(r.status, token).toBe(403);
      expect(r.json).toEqual({ detail: 'only an Admin may register users', code: 'forbidden' });
    }
    expect((await call('POST', '/auth/register', { token: 'viewer-token', raw: '{bad' })).status).toBe(403);
    expect((await call('POST', '/auth/register', { token: 'admin-token', body: invalid })).status).toBe(422);
    expect((await call('POST', '/auth/register', { body: invalid })).status).toBe(422);
    expect(gw.state.calls.map((c) => c.method)).not.toContain('register');
  });

  it('register validates every field at once', async () => {
    const r = await call('POST', '/auth/register', { body: { email: 'not-an-email', password: 'short', role: 'King', extra: 1 } });
    expect(r.status).toBe(422);
    const byLoc = Object.fromEntries(r.json.detail.map((p: any) => [p.loc.join('.'), p.type]));
    expect(byLoc).toEqual({
      'body.email': 'string_pattern_mismatch',
      'body.password': 'string_too_short',
      'body.name': 'missing',
      'body.role': 'enum',
      'body.extra': 'extra_forbidden',
    });
  });
});

describe('authentication', () => {
  it('401 without, with a malformed and with an invalid token, with WWW-Authenticate', async () => {
    const cases: Record<string, string>[] = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer nope' }];
    for (const headers of cases) {
      const r = await call('GET', '/me', { headers });
      expect(r.status).toBe(401);
      expect(r.json.code).toBe('unauthenticated');
      expect(typeof r.json.detail).toBe('string');
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('auth down → 503, never 401 or 500', async () => {
    gw.state.down.add('auth');
    const r = await call('GET', '/me', { token: 'fresh-token-never-cached' });
    expect(r.status).toBe(503);
    expect(r.json.code).toBe('unavailable');
  });

  it('caches the principal: one Authenticate call for repeated requests', async () => {
    await call('GET', '/events', { token: 'supervisor-token' });
    await call('GET', '/events', { token: 'supervisor-token' });
    expect(gw.state.calls.filter((c) => c.method === 'authenticate')).toHaveLength(1);
  });

  it('a revocation drops the cached key at once', async () => {
    expect((await call('GET', '/events', { token: 'svc_artist' })).status).toBe(200);
    gw.state.tokens.delete('svc_artist');
    expect((await call('GET', '/events', { token: 'svc_artist' })).status).toBe(200); // still cached
    gw.bus.emit('revocation', { api_key_id: '0190a0b0-0000-7000-8000-0000000000aa', user_id: null });
    expect((await call('GET', '/events', { token: 'svc_artist' })).status).toBe(401);
    gw.state.tokens.set('svc_artist', {
      userId: USERS.artist.id,
      role: 'Artist',
      authKind: 'api_key',
      apiKeyId: '0190a0b0-0000-7000-8000-0000000000aa',
      email: 'a@example.com',
      cacheSeconds: 60,
    });
  });

  it('a User event drops that user’s cached tokens (role change)', async () => {
    const t = 'promote-me';
    gw.state.tokens.set(t, { userId: USERS.viewer.id, role: 'Viewer', authKind: 'token', email: 'v@example.com', cacheSeconds: 60 });
    expect((await createShot(t)).status).toBe(403);
    gw.state.tokens.set(t, { userId: USERS.viewer.id, role: 'Artist', authKind: 'token', email: 'v@example.com', cacheSeconds: 60 });
    expect((await createShot(t)).status).toBe(403); // cached
    gw.bus.emit('event', {
      row: {
        id: 1,
        entity_type: 'User',
        entity_id: USERS.viewer.id,
        project_id: null,
        action: 'update',
        actor: null,
        changes: { role: 'Artist' },
        created_at: '',
      },
      text: '{}',
    });
    expect((await createShot(t)).status).toBe(200);
  });
});

describe('/me and API keys', () => {
  it('/me is the caller’s User record plus role and auth kind', async () => {
    await gw.state.records.set(USERS.artist.id, {
      id: USERS.artist.id,
      entityType: 'User',
      active: true,
      createdAt: '2026-01-01T00:00:00.000000Z',
      updatedAt: '2026-01-01T00:00:00.000001Z',
      dataJson: '{"name":"Art","role":"Artist"}',
    });
    const r = await call('GET', '/me', { token: 'svc_artist' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      id: USERS.artist.id,
      entity_type: 'User',
      project_id: null,
      status: null,
      active: true,
      thumbnail_id: null,
      created_by: null,
      created_at: '2026-01-01T00:00:00.000000Z',
      updated_at: '2026-01-01T00:00:00.000001Z',
      data: { name: 'Art', role: 'Artist' },
      role: 'Artist',
      auth: 'api_key',
    });
    expect(r.headers.get('etag')).toBe('"2026-01-01T00:00:00.000001Z"');
  });

  it('issues, lists and revokes keys', async () => {
    const issued = await call('POST', '/auth/api-keys', { token: 'artist-token', body: { name: 'farm' } });
    expect(issued.status).toBe(200);
    expect(Object.keys(issued.json).sort()).toEqual(['created_at', 'expires_at', 'id', 'name', 'pools', 'scope', 'token']);
    expect([issued.json.scope, issued.json.pools]).toEqual([null, null]);
    expect(issued.json.token).toBe('svc_new');
    expect(issued.json.expires_at).toBeNull();
    const list = await call('GET', '/auth/api-keys', { token: 'artist-token' });
    expect(list.json.items[0]).toEqual({
      id: issued.json.id,
      user_id: USERS.artist.id,
      name: 'farm',
      prefix: 'svc_abcd',
      created_at: expect.any(String),
      last_used_at: null,
      expires_at: null,
      scope: null,
      pools: null,
    });
    const gone = await call('DELETE', `/auth/api-keys/${issued.json.id}`, { token: 'artist-token' });
    expect(gone.json).toEqual({ id: issued.json.id, revoked: true });
    const bad = await call('DELETE', '/auth/api-keys/not-a-uuid', { token: 'artist-token' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail).toEqual([{ loc: ['path', 'id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
    const missing = await call('DELETE', `/auth/api-keys/${PROJECT}`, { token: 'artist-token' });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('not_found');
  });
});
