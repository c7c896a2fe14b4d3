import { AppError } from '@reelbase/lib-platform';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';
const MISSING = '0190a0b0-0000-7000-8000-0000000000ff';

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', BODY_LIMIT_BYTES: '4096' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
});

const RECORD_KEYS = ['active', 'created_at', 'created_by', 'data', 'entity_type', 'id', 'project_id', 'status', 'thumbnail_id', 'updated_at'];

describe('create, read, patch, retire, revive', () => {
  it('round-trips a record with its ETag and one gRPC call per create', async () => {
    const created = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, status: 'wtg', data: { code: 'sh010' } } });
    expect(created.status).toBe(200);
    expect(Object.keys(created.json).sort()).toEqual(RECORD_KEYS);
    expect(created.json).toMatchObject({
      entity_type: 'Shot',
      project_id: PROJECT,
      status: 'wtg',
      active: true,
      thumbnail_id: null,
      created_by: USERS.artist.id,
      data: { code: 'sh010' },
    });
    expect(created.headers.get('etag')).toBe(`"${created.json.updated_at}"`);
    expect(gw.state.calls.map((c) => c.method)).toEqual(['authenticate', 'createRecord']);
    const create = gw.state.calls[1]!;
    expect(create.ctx.principal).toMatchObject({ userId: USERS.artist.id, role: 'Artist', authKind: 'token' });
    expect(create.ctx.requestId).toBe(created.headers.get('x-request-id'));

    const read = await call('GET', `/entities/Shot/${created.json.id}`, { token: 'viewer-token' });
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json);
    expect(read.headers.get('etag')).toBe(created.headers.get('etag'));

    const patched = await call('PATCH', `/entities/Shot/${created.json.id}`, {
      token: 'artist-token',
      body: { data: { description: 'wide' }, status: null },
      headers: { 'if-match': created.headers.get('etag')! },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.data).toEqual({ code: 'sh010', description: 'wide' });
    const upd = gw.state.calls.find((c) => c.method === 'updateRecord')!.req as Record<string, unknown>;
    expect(upd).toMatchObject({ ifMatch: created.json.updated_at, status: {}, projectId: undefined });

    const stale = await call('PATCH', `/entities/Shot/${created.json.id}`, {
      token: 'artist-token',
      body: { data: { description: 'x' } },
      headers: { 'if-match': created.headers.get('etag')! },
    });
    expect(stale.status).toBe(409);
    expect(stale.json).toEqual({ detail: 'the record changed since it was read', code: 'stale_write' });

    const staleDelete = await call('DELETE', `/entities/Shot/${created.json.id}`, {
      token: 'artist-token',
      headers: { 'if-match': created.headers.get('etag')! },
    });
    expect(staleDelete.status).toBe(409);

    const retired = await call('DELETE', `/entities/Shot/${created.json.id}`, { token: 'artist-token' });
    expect(retired.status).toBe(200);
    expect(retired.json).toEqual({ id: created.json.id, entity_type: 'Shot', retired: true });
    expect((await call('GET', `/entities/Shot/${created.json.id}`, { token: 'artist-token' })).status).toBe(404);

    const revived = await call('POST', `/entities/Shot/${created.json.id}/revive`, { token: 'artist-token' });
    expect(revived.status).toBe(200);
    expect(revived.json.active).toBe(true);
    expect(revived.headers.get('etag')).toBeTruthy();
  });

  it('defaults data to {} and passes nulls as absent on create', async () => {
    const r = await call('POST', '/entities/Project', { token: 'admin-token', body: { project_id: null } });
    expect(r.status).toBe(200);
    expect(r.json.data).toEqual({});
    expect(r.json.project_id).toBeNull();
  });

  it('unknown record → 404 {"detail","code":"not_found"}', async () => {
    const r = await call('GET', `/entities/Shot/${MISSING}`, { token: 'artist-token' });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ detail: expect.any(String), code: 'not_found' });
  });

  it('records down → 503', async () => {
    gw.state.down.add('records');
    const r = await call('GET', `/entities/Shot/${MISSING}`, { token: 'artist-token' });
    expect(r.status).toBe(503);
    expect(r.json.code).toBe('unavailable');
  });

  it('a service validation error → 422 with its problems', async () => {
    const r = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, data: { bad_field: 1 } } });
    expect(r.status).toBe(422);
    expect(r.json).toEqual({ detail: [{ loc: ['body', 'data', 'bad_field'], msg: 'unknown field', type: 'value_error' }] });
  });
});

describe('validation (422)', () => {
  it('reports every problem at once, unknown keys one entry each', async () => {
    const r = await call('POST', '/entities/Shot', {
      token: 'artist-token',
      body: { project_id: 'nope', active: 'yes', data: [], colour: 1, size: 2 },
    });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual(
      expect.arrayContaining([
        { loc: ['body', 'project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' },
        { loc: ['body', 'active'], msg: 'Input should be a valid boolean', type: 'bool_type' },
        { loc: ['body', 'data'], msg: expect.any(String), type: 'dict_type' },
        { loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['body', 'size'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]),
    );
    expect(r.json.detail).toHaveLength(5);
    expect(gw.state.calls.map((c) => c.method)).not.toContain('createRecord');
  });

  it('path problems: entity type and id', async () => {
    const r = await call('GET', '/entities/shot/123', { token: 'artist-token' });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((p: any) => [p.loc, p.type])).toEqual([
      [['path', 'entity_type'], 'string_pattern_mismatch'],
      [['path', 'id'], 'uuid_parsing'],
    ]);
    const ok = await call('PATCH', `/entities/Shot/${MISSING}`, { token: 'artist-token', body: { status: 5 } });
    expect(ok.json.detail).toEqual([{ loc: ['body', 'status'], msg: 'Input should be a valid string', type: 'string_type' }]);
  });

  it('malformed JSON → 422 json_invalid', async () => {
    const r = await call('POST', '/entities/Shot', { token: 'artist-token', raw: '{"data": ' });
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(1);
    expect(r.json.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('a body over the limit → 413 payload_too_large', async () => {
    const r = await call('POST', '/entities/Shot', { token: 'artist-token', body: { data: { blob: 'x'.repeat(5000) } } });
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ detail: expect.any(String), code: 'payload_too_large' });
  });
});

describe('roles (403) and the order of checks', () => {
  it('Project and User writes are Admin only', async () => {
    for (const token of ['supervisor-token', 'artist-token', 'viewer-token']) {
      const r = await call('POST', '/entities/Project', { token, body: { data: { name: 'P' } } });
      expect(r.status).toBe(403);
      expect(r.json).toEqual({ detail: expect.any(String), code: 'forbidden' });
      expect((await call('DELETE', `/entities/User/${MISSING}`, { token })).status).toBe(403);
    }
  });

  it('Viewers may publish and write notes but not other types', async () => {
    expect((await call('POST', '/entities/Version', { token: 'viewer-token', body: { project_id: PROJECT, data: {} } })).status).toBe(200);
    expect((await call('POST', '/entities/Note', { token: 'viewer-token', body: { project_id: PROJECT } })).status).toBe(200);
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', body: { project_id: PROJECT } })).status).toBe(403);
    expect((await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT } })).status).toBe(200);
  });

  it('a `role` field of another type is an ordinary field; roles live on User records, which are Admin only', async () => {
    const created = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, data: { code: 'r010', role: 'hero' } } });
    expect(created.status).toBe(200);
    expect(created.json.data.role).toBe('hero');
    const patched = await call('PATCH', `/entities/Shot/${created.json.id}`, { token: 'artist-token', body: { data: { role: 'background' } } });
    expect(patched.status).toBe(200);
    expect(patched.json.data.role).toBe('background');
    for (const token of ['supervisor-token', 'artist-token']) {
      const r = await call('PATCH', `/entities/User/${USERS.artist.id}`, { token, body: { data: { role: 'Admin' } } });
      expect(r.status).toBe(403);
      expect(r.json.code).toBe('forbidden');
    }
  });

  it('TimeLog for someone else needs Admin, Supervisor or Coordinator', async () => {
    const other = { type: 'User', id: USERS.viewer.id };
    const own = { type: 'User', id: USERS.artist.id };
    expect((await call('POST', '/entities/TimeLog', { token: 'artist-token', body: { project_id: PROJECT, data: { user: other, minutes: 5 } } })).status).toBe(
      403,
    );
    expect((await call('POST', '/entities/TimeLog', { token: 'artist-token', body: { project_id: PROJECT, data: { user: own, minutes: 5 } } })).status).toBe(
      200,
    );
    expect(
      (await call('POST', '/entities/TimeLog', { token: 'supervisor-token', body: { project_id: PROJECT, data: { user: other, minutes: 5 } } })).status,
    ).toBe(200);
  });

  it('a TimeLog patch naming another user is 403 before validation; records’ own 403 passes through', async () => {
    const other = { type: 'User', id: USERS.viewer.id };
    const early = await call('PATCH', `/entities/TimeLog/${MISSING}`, { token: 'artist-token', body: { data: { user: other }, bogus: 1 } });
    expect(early.status).toBe(403);
    expect(gw.state.calls.map((c) => c.method)).not.toContain('updateRecord');
    // Whose an existing TimeLog is only records knows: its refusal reaches the client unchanged.
    for (const [method, path, body, rpc] of [
      ['PATCH', `/entities/TimeLog/${MISSING}`, { data: { minutes: 5 } }, 'updateRecord'],
      ['DELETE', `/entities/TimeLog/${MISSING}`, undefined, 'retireRecord'],
      ['POST', `/entities/TimeLog/${MISSING}/revive`, undefined, 'reviveRecord'],
    ] as const) {
      gw.state.failNext.set(rpc, new AppError('forbidden', 'only the owner may change this TimeLog'));
      const r = await call(method, path, { token: 'artist-token', body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json).toEqual({ detail: 'only the owner may change this TimeLog', code: 'forbidden' });
    }
  });

  it('401 before 403 before 422 before 404', async () => {
    const invalid = { project_id: 'nope', extra: 1 };
    // No token: 401 even with an invalid body on an Admin-only type.
    expect((await call('POST', '/entities/Project', { body: invalid })).status).toBe(401);
    expect((await call('POST', '/entities/Project', { raw: '{bad' })).status).toBe(401);
    // A Viewer: 403 even with an invalid or malformed body.
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', body: invalid })).status).toBe(403);
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', raw: '{bad' })).status).toBe(403);
    expect((await call('PATCH', `/entities/Project/not-a-uuid`, { token: 'artist-token', body: invalid })).status).toBe(403);
    // Allowed role, invalid request: 422 before any existence check.
    expect((await call('PATCH', `/entities/Shot/${MISSING}`, { token: 'artist-token', body: invalid })).status).toBe(422);
    expect(gw.state.calls.map((c) => c.method)).not.toContain('updateRecord');
    // Valid request for a missing record: 404.
    expect((await call('PATCH', `/entities/Shot/${MISSING}`, { token: 'artist-token', body: { data: {} } })).status).toBe(404);
  });
});

describe('ids are canonical behind the gateway', () => {
  it('lower-cases UUIDs in the path, the body columns and links inside data before records sees them', async () => {
    const thumb = '0190A0B0-0000-7000-8000-0000000000AB';
    const owner = { type: 'User', id: USERS.artist.id.toUpperCase() };
    const created = await call('POST', '/entities/Shot', {
      token: 'artist-token',
      body: { project_id: PROJECT.toUpperCase(), thumbnail_id: thumb, data: { owner, list: [owner], note: { type: 'Note', id: 'not-a-uuid' }, text: thumb } },
    });
    expect(created.status).toBe(200);
    const create = gw.state.calls.find((c) => c.method === 'createRecord')!.req as { projectId: string; thumbnailId: string; dataJson: string };
    expect(create.projectId).toBe(PROJECT);
    expect(create.thumbnailId).toBe(thumb.toLowerCase());
    const lower = { type: 'User', id: USERS.artist.id };
    expect(JSON.parse(create.dataJson)).toEqual({ owner: lower, list: [lower], note: { type: 'Note', id: 'not-a-uuid' }, text: thumb });

    const patched = await call('PATCH', `/entities/Shot/${String(created.json.id).toUpperCase()}`, {
      token: 'artist-token',
      body: { project_id: PROJECT.toUpperCase() },
    });
    expect(patched.status).toBe(200);
    const update = gw.state.calls.find((c) => c.method === 'updateRecord')!.req as { id: string; projectId: { value: string } };
    expect(update.id).toBe(created.json.id);
    expect(update.projectId).toEqual({ value: PROJECT });
  });
});
