/**
 * The REST surface end to end: registration, login, API keys, the record lifecycle with both
 * kinds of credential, 401/403/422/409 in the documented shapes, GET /me and key revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

const MISSING = '0190b3c4-0000-7000-8000-000000000000';

describe('REST API (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let key: { id: string; token: string };
  let keyApi: Api;

  beforeAll(async () => {
    e = await startE2EStack('api');
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('registers the first user as Admin with a token, logs in and issues an API key', async () => {
    admin = await bootstrapAdmin(e.api, 'admin@studio.test', 'correct horse battery');
    expect(admin.token).toEqual(expect.any(String));
    expect(admin.user).toMatchObject({ entity_type: 'User', data: { email: 'admin@studio.test', role: 'Admin' } });

    const login = expectStatus(await e.api.post('/auth/login', { email: 'admin@studio.test', password: 'correct horse battery' }), 200, 'login');
    expect(login).toMatchObject({ access_token: expect.any(String), token_type: 'bearer', expires_in: expect.any(Number) });
    expectError(await e.api.post('/auth/login', { email: 'admin@studio.test', password: 'wrong password!' }), 401, 'unauthenticated');
    expectError(await e.api.post('/auth/login', { email: 'nobody@studio.test', password: 'wrong password!' }), 401, 'unauthenticated');
    admin = { ...admin, api: e.api.as(login.access_token), token: login.access_token };

    const issued = expectStatus(await admin.api.post('/auth/api-keys', { name: 'pipeline daemon' }), 200, 'issue key');
    expect(issued).toMatchObject({ id: expect.any(String), name: 'pipeline daemon', token: expect.stringMatching(/^svc_/) });
    key = { id: issued.id, token: issued.token };
    keyApi = e.api.as(key.token);
    const keys = expectStatus(await admin.api.get('/auth/api-keys'), 200).items;
    expect(keys).toEqual([expect.objectContaining({ id: key.id, name: 'pipeline daemon', prefix: expect.any(String) })]);
    expect(JSON.stringify(keys)).not.toContain(key.token);
  });

  it('GET /me names the user, its role and how it authenticated', async () => {
    const byToken = expectStatus(await admin.api.get('/me'), 200);
    expect(byToken).toMatchObject({ id: admin.user.id, entity_type: 'User', role: 'Admin', auth: 'token' });
    const byKey = expectStatus(await keyApi.get('/me'), 200);
    expect(byKey).toMatchObject({ id: admin.user.id, role: 'Admin', auth: 'api_key' });
  });

  for (const cred of ['login token', 'API key'] as const) {
    it(`creates, reads, patches, deletes and revives a Project and a Shot with the ${cred}`, async () => {
      const api = cred === 'login token' ? admin.api : keyApi;
      const tag = cred === 'login token' ? 'tok' : 'key';
      const project = expectStatus(await api.post('/entities/Project', { data: { name: `Feature ${tag}`, code: `feat_${tag}` } }), 200, 'create Project');
      expect(project).toMatchObject({
        id: expect.any(String),
        entity_type: 'Project',
        active: true,
        created_by: admin.user.id,
        data: { name: `Feature ${tag}`, code: `feat_${tag}` },
      });
      expect(project.created_at).toEqual(expect.any(String));

      const created = await api.post('/entities/Shot', { project_id: project.id, data: { code: 'sh010', cut_in: 1001, cut_out: 1100 } });
      const shot = expectStatus(created, 200, 'create Shot');
      expect(shot).toMatchObject({
        entity_type: 'Shot',
        project_id: project.id,
        active: true,
        created_by: admin.user.id,
        data: { code: 'sh010', cut_in: 1001, cut_out: 1100 },
      });
      const path = `/entities/Shot/${shot.id}`;

      const read = await api.get(path);
      expect(expectStatus(read, 200, 'GET Shot')).toEqual(shot);
      expect(read.headers.get('etag')).toBe(`"${shot.updated_at}"`);

      const patched = expectStatus(await api.patch(path, { data: { description: 'hero shot', cut_out: null } }), 200, 'PATCH Shot');
      expect(patched.data).toEqual({ code: 'sh010', cut_in: 1001, description: 'hero shot' });
      expect(patched.updated_at > shot.updated_at).toBe(true);
      expect(expectStatus(await api.get(path), 200).data).toEqual({ code: 'sh010', cut_in: 1001, description: 'hero shot' });

      expectStatus(await api.delete(path), 200, 'DELETE Shot');
      expectError(await api.get(path), 404, 'not_found');
      expectError(await api.patch(path, { data: { description: 'gone' } }), 404, 'not_found');

      const revived = expectStatus(await api.post(`${path}/revive`), 200, 'revive Shot');
      expect(revived).toMatchObject({ id: shot.id, project_id: project.id, data: { code: 'sh010', cut_in: 1001, description: 'hero shot' } });
      expect(expectStatus(await api.get(path), 200).data.description).toBe('hero shot');
      expect(expectStatus(await api.get(`/entities/Project/${project.id}`), 200).id).toBe(project.id);
    });
  }

  it('answers 401 on every bearer route without a token or with a bad one', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/me'],
      ['GET', '/auth/api-keys'],
      ['POST', '/auth/api-keys', { name: 'x' }],
      ['DELETE', `/auth/api-keys/${MISSING}`],
      ['POST', '/entities/Project', { data: { name: 'x', code: 'x' } }],
      ['GET', `/entities/Shot/${MISSING}`],
      ['PATCH', `/entities/Shot/${MISSING}`, { data: {} }],
      ['DELETE', `/entities/Shot/${MISSING}`],
      ['POST', `/entities/Shot/${MISSING}/revive`],
      ['GET', '/events'],
    ];
    for (const [method, path, body] of routes) {
      for (const token of [null, 'not-a-token', 'svc_0000000000000000000000000000', `${admin.token}x`]) {
        const res = await e.api.call(method, path, { body, token });
        expect({ route: `${method} ${path}`, token, status: res.status }).toEqual({ route: `${method} ${path}`, token, status: 401 });
        expect(res.body?.code, `${method} ${path}: ${res.text}`).toBe('unauthenticated');
      }
    }
  });

  it('answers 403 when the role may not write, and a second unauthenticated register', async () => {
    const artist = await createUser(admin.api, 'Artist', 'artist@studio.test');
    const viewer = await createUser(admin.api, 'Viewer', 'viewer@studio.test');
    expect(expectStatus(await artist.api.get('/me'), 200)).toMatchObject({ role: 'Artist', auth: 'token' });
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Roles', code: 'roles' } }), 200);

    expectError(await artist.api.post('/entities/Project', { data: { name: 'Nope', code: 'nope' } }), 403, 'forbidden');
    expectError(await viewer.api.post('/entities/Shot', { project_id: project.id, data: { code: 'v010' } }), 403, 'forbidden');
    // The same writes are allowed to the roles that have them: the 403s are about roles.
    const shot = expectStatus(await artist.api.post('/entities/Shot', { project_id: project.id, data: { code: 'a010' } }), 200, 'Artist creates Shot');
    expectError(await viewer.api.patch(`/entities/Shot/${shot.id}`, { data: { description: 'v' } }), 403, 'forbidden');
    expectStatus(await viewer.api.get(`/entities/Shot/${shot.id}`), 200, 'Viewer reads Shot');

    expectError(await e.api.post('/auth/register', { email: 'walkin@studio.test', password: 'password-1234', name: 'Walk In' }), 403, 'forbidden');
    expectError(await artist.api.post('/auth/register', { email: 'walkin@studio.test', password: 'password-1234', name: 'Walk In' }), 403, 'forbidden');
    expectError(await e.api.post('/auth/login', { email: 'walkin@studio.test', password: 'password-1234' }), 401, 'unauthenticated');
  });

  it('answers 422 in the documented shape for every kind of malformed request', async () => {
    const api = admin.api;
    expectValidation(await api.post('/entities/Project', { data: { name: 'Typo', code: 'typo' }, bogus_key: 1 }), ['body'], 'bogus_key');
    for (const limit of ['0', '1001', 'many']) {
      expectValidation(await api.get(`/events?limit=${limit}`), ['query', 'limit']);
    }
    expectValidation(await api.post('/entities/not-a-type', { data: {} }), ['path', 'entity_type']);
    expectValidation(await api.get(`/entities/Shot/not-a-uuid`), ['path', 'id']);
    expectValidation(await api.call('POST', '/entities/Project', { rawBody: '{"data": {"name": "Broken"' }), ['body']);
    expectValidation(await api.post('/auth/register', { email: 'short@studio.test', password: 'short', name: 'Short' }), ['body', 'password']);
    // All problems at once.
    const many = await api.post('/auth/register', { email: 'nope', password: 'short', name: '', extra: true });
    expectValidation(many, ['body', 'password']);
    expect(many.body.detail.length).toBeGreaterThanOrEqual(3);
    // What PostgreSQL cannot store, or what is nested too deep to handle, is a 422 too, never a 500.
    expectValidation(await api.post('/entities/Project', { data: { name: 'Nul', code: 'n\u0000ul' } }), ['body', 'data', 'code']);
    expectValidation(await api.post('/entities/Project', { data: { ['na\u0000me']: 'Nul key', code: 'nulkey' } }), ['body', 'data']);
    expectValidation(await api.call('POST', '/entities/Project', { rawBody: '{"data": {"name": "x\\ud800", "code": "lone"}}' }), ['body', 'data', 'name']);
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const tooDeep = await api.call('POST', '/entities/Project', { rawBody: `{"data": {"name": "Deep", "code": "deep", "x": ${deep}}}` });
    expectValidation(tooDeep, ['body', 'data', 'x']);
    expect(tooDeep.body.detail[0].type).toBe('too_deep');
    // Problems found by records name the field; the gateway says where it was sent.
    const noProject = await api.post('/entities/Shot', { data: { code: 'x' } });
    expect(noProject.status).toBe(422);
    expect(noProject.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'project_id'], type: 'missing' })]);
    const missingProject = await api.post('/entities/Shot', { project_id: MISSING, data: { code: 'x' } });
    expect(missingProject.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'project_id'], type: 'link_not_found' })]);
  });

  it("lets a Viewer log, change and delete their own time, but not touch another user's TimeLog", async () => {
    const viewer = await createUser(admin.api, 'Viewer', 'timelog-viewer@studio.test');
    const artist = await createUser(admin.api, 'Artist', 'timelog-artist@studio.test');
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Time', code: 'time' } }), 200);
    const link = (id: string) => ({ type: 'User', id });

    const theirs = expectStatus(
      await artist.api.post('/entities/TimeLog', { project_id: project.id, data: { user: link(artist.user.id), minutes: 30, date: '2026-01-05' } }),
      200,
      'Artist logs own time',
    );
    const theirPath = `/entities/TimeLog/${theirs.id}`;
    expectError(await viewer.api.patch(theirPath, { data: { minutes: 1 } }), 403, 'forbidden');
    expectError(await viewer.api.delete(theirPath), 403, 'forbidden');
    expectError(await viewer.api.post('/entities/TimeLog', { project_id: project.id, data: { user: link(artist.user.id), minutes: 5 } }), 403, 'forbidden');
    expect(expectStatus(await admin.api.get(theirPath), 200).data).toMatchObject({ user: link(artist.user.id), minutes: 30 });
    expectStatus(await artist.api.delete(theirPath), 200, 'Artist deletes own TimeLog');
    expectError(await viewer.api.post(`${theirPath}/revive`), 403, 'forbidden');

    const own = expectStatus(
      await viewer.api.post('/entities/TimeLog', { project_id: project.id, data: { user: link(viewer.user.id), minutes: 15, date: '2026-01-05' } }),
      200,
      'Viewer logs own time',
    );
    const ownPath = `/entities/TimeLog/${own.id}`;
    expect(expectStatus(await viewer.api.patch(ownPath, { data: { minutes: 20 } }), 200, 'Viewer patches own TimeLog').data.minutes).toBe(20);
    expectStatus(await viewer.api.delete(ownPath), 200, 'Viewer deletes own TimeLog');
    expectError(await viewer.api.get(ownPath), 404, 'not_found');
  });

  it('applies If-Match only to an unchanged record: a stale ETag is 409 stale_write', async () => {
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Etag', code: 'etag' } }), 200);
    const path = `/entities/Project/${project.id}`;
    const etag1 = (await admin.api.get(path)).headers.get('etag')!;
    expect(etag1).toBe(`"${project.updated_at}"`);
    const first = await admin.api.patch(path, { data: { description: 'one' } }, { headers: { 'if-match': etag1 } });
    expect(expectStatus(first, 200, 'PATCH with current ETag').data.description).toBe('one');
    const etag2 = first.headers.get('etag');
    expect(etag2).toBe(`"${first.body.updated_at}"`);
    expect(etag2).not.toBe(etag1);

    expectError(await admin.api.patch(path, { data: { description: 'two' } }, { headers: { 'if-match': etag1 } }), 409, 'stale_write');
    expectError(await admin.api.delete(path, { headers: { 'if-match': etag1 } }), 409, 'stale_write');
    expect(expectStatus(await admin.api.get(path), 200).data.description).toBe('one');
    expectStatus(await admin.api.delete(path, { headers: { 'if-match': etag2! } }), 200, 'DELETE with current ETag');
    expectError(await admin.api.get(path), 404, 'not_found');
  });

  it('reads UUIDs in any case as the same id: a PATCH re-sending an id in upper case changes nothing and logs nothing', async () => {
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Case', code: 'case' } }), 200);
    const UP = String(project.id).toUpperCase();
    const sequence = expectStatus(await admin.api.post('/entities/Sequence', { project_id: project.id, data: { code: 'sq' } }), 200);
    const owner = { type: 'Sequence', id: String(sequence.id).toUpperCase() };
    const created = await admin.api.post('/entities/Shot', { project_id: UP, data: { code: 'c010', sequence: owner } });
    const shot = expectStatus(created, 200, 'create Shot with upper-case ids');
    const lowerOwner = { type: 'Sequence', id: sequence.id };
    expect(shot).toMatchObject({ project_id: project.id, data: { code: 'c010', sequence: lowerOwner } });
    const path = `/entities/Shot/${String(shot.id).toUpperCase()}`;

    for (let i = 0; i < 3; i++) {
      const again = await admin.api.patch(path, { project_id: UP, data: { sequence: owner } }, { headers: { 'if-match': created.headers.get('etag')! } });
      expect(expectStatus(again, 200, 'PATCH with the same ids in upper case')).toEqual(shot);
      expect(again.headers.get('etag')).toBe(created.headers.get('etag'));
    }
    // A real change afterwards: once it is logged, anything the no-op PATCHes had logged would be too.
    expectStatus(await admin.api.patch(path, { data: { description: 'real' } }), 200, 'real PATCH');
    const logged = await eventually(async () => {
      const items = expectStatus(await admin.api.get(`/events?project_id=${UP}&after=0`), 200).items.filter(
        (ev: { entity_id: string }) => ev.entity_id === shot.id,
      );
      return items.some((ev: { action: string }) => ev.action === 'update') ? items : undefined;
    });
    expect(logged.map((ev: { action: string }) => ev.action)).toEqual(['create', 'update']);
    expect(logged[0].project_id).toBe(project.id);
    expect(logged[0].changes).toMatchObject({ project_id: project.id, sequence: lowerOwner });
    expect(logged[1].changes).toEqual({ description: 'real' });
  });

  it('rejects a revoked API key within seconds', async () => {
    // Use the key right before revoking it, so any cache in front of auth holds it.
    expectStatus(await keyApi.get('/me'), 200);
    expectStatus(await admin.api.delete(`/auth/api-keys/${key.id}`), 200, 'revoke key');
    const t0 = Date.now();
    await eventually(async () => ((await keyApi.get('/me')).status === 401 ? true : undefined), 10_000, 'revoked key rejected');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expectError(await keyApi.post('/entities/Project', { data: { name: 'after', code: 'after' } }), 401, 'unauthenticated');
    // The login token of the same user still works.
    expectStatus(await admin.api.get('/me'), 200);
  });
  it('rotates the signing key (Admin only) without logging anybody out', async () => {
    const before = admin.token;
    const artist = await createUser(admin.api, 'Artist', 'rotation-artist@studio.test');
    expectError(await artist.api.post('/auth/signing-keys/rotate', {}), 403, 'forbidden');
    const rotated = expectStatus(await admin.api.post('/auth/signing-keys/rotate', {}), 200, 'rotate');
    expect(rotated.kid).toEqual(expect.any(String));
    const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()).kid;
    expect(kidOf(before)).not.toBe(rotated.kid);
    // The token signed by the old key still works; a new login is signed by the new key.
    expectStatus(await admin.api.get('/me'), 200, 'old token after rotation');
    const login = expectStatus(await e.api.post('/auth/login', { email: 'admin@studio.test', password: 'correct horse battery' }), 200);
    expect(kidOf(login.access_token)).toBe(rotated.kid);
    expectStatus(await e.api.as(login.access_token).get('/me'), 200, 'new token');
  });
  it('rejects a disabled or retired user at once, even with an unexpired token or a key', async () => {
    const artist = await createUser(admin.api, 'Artist', 'leaver@studio.test');
    const artistKey = expectStatus(await artist.api.post('/auth/api-keys', { name: 'leaver key' }), 200).token as string;
    // Warm every cache in front of auth first.
    expectStatus(await artist.api.get('/me'), 200);
    expectStatus(await e.api.as(artistKey).get('/me'), 200);

    expectStatus(await admin.api.patch(`/entities/User/${artist.user.id}`, { data: { login_enabled: false } }), 200, 'disable login');
    await eventually(async () => ((await artist.api.get('/me')).status === 401 ? true : undefined), 3_000, 'disabled user rejected');
    expectError(await e.api.as(artistKey).get('/me'), 401, 'unauthenticated');
    expectError(await e.api.post('/auth/login', { email: 'leaver@studio.test', password: 'password-1234' }), 401, 'unauthenticated');

    expectStatus(await admin.api.patch(`/entities/User/${artist.user.id}`, { data: { login_enabled: true } }), 200, 'enable login');
    await eventually(async () => ((await artist.api.get('/me')).status === 200 ? true : undefined), 3_000, 'enabled again');

    expectStatus(await admin.api.delete(`/entities/User/${artist.user.id}`), 200, 'retire user');
    await eventually(async () => ((await artist.api.get('/me')).status === 401 ? true : undefined), 3_000, 'retired user rejected');
    expectError(await e.api.as(artistKey).post('/entities/Shot', { data: { code: 'x' } }), 401, 'unauthenticated');
  });
});
