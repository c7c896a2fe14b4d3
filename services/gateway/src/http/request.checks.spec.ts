/**
 * Checks every request gets before route validation: unstorable characters and runaway
 * nesting (422, never a 500), bodies a route does not take (422) and bodies that are not JSON
 * (415), all after authentication and roles.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';
const ID = '0190a0b0-0000-7000-8000-0000000000ee';
const API_KEY_ID = '0190a0b0-0000-7000-8000-0000000000aa';

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
});

/** fetch refuses a GET with a body; node:http sends one. */
function getWithBody(path: string, body: string, token?: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (token) headers.authorization = `Bearer ${token}`;
    const req = request(`${gw.url}${path}`, { method: 'GET', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const writes = () => gw.state.calls.filter((c) => c.method !== 'authenticate').map((c) => c.method);
const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('unstorable characters and nesting (422, never 500)', () => {
  it('a NUL in a data value or key', async () => {
    const value = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, data: { code: 'sh\u0000010' } } });
    expect(value.status).toBe(422);
    expect(value.json.detail).toEqual([{ loc: ['body', 'data', 'code'], msg: expect.stringContaining('NUL'), type: 'string_invalid_character' }]);
    const key = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, data: { ['co\u0000de']: 'x' } } });
    expect(key.status).toBe(422);
    expect(key.json.detail).toEqual([{ loc: ['body', 'data', 'co\u0000de'], msg: expect.stringContaining('Keys'), type: 'string_invalid_character' }]);
    const top = await call('POST', '/auth/login', { body: { email: 'a@example.com', password: 'pw\u0000' } });
    expect(top.status).toBe(422);
    expect(top.json.detail[0].loc).toEqual(['body', 'password']);
    expect(writes()).toEqual([]);
  });

  it('a lone surrogate in a string, sent as the JSON escape', async () => {
    const r = await call('PATCH', `/entities/Shot/${ID}`, { token: 'artist-token', raw: '{"data": {"description": "x\\ud800y"}}' });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ loc: ['body', 'data', 'description'], msg: expect.stringContaining('surrogate'), type: 'string_invalid_character' }]);
    const pair = await call('POST', '/entities/Shot', { token: 'artist-token', raw: `{"project_id": "${PROJECT}", "data": {"code": "\\ud83c\\udfac"}}` });
    expect(pair.status).toBe(200);
  });

  it('a body nested thousands of levels deep', async () => {
    const r = await call('POST', '/entities/Shot', { token: 'artist-token', raw: `{"project_id": "${PROJECT}", "data": {"blob": ${deep(5000)}}}` });
    expect(r.status).toBe(422);
    expect(r.json.detail).toHaveLength(1);
    expect(r.json.detail[0]).toMatchObject({ loc: ['body', 'data', 'blob', ...Array(62).fill(0)], type: 'too_deep' });
    // 64 levels (the body itself, data, and 62 arrays) are fine.
    const ok = await call('POST', '/entities/Shot', { token: 'artist-token', raw: `{"project_id": "${PROJECT}", "data": {"blob": ${deep(62)}}}` });
    expect(ok.status).toBe(200);
  });

  it('a NUL in a query string value', async () => {
    const r = await call('GET', '/events?entity_type=Shot%00', { token: 'viewer-token' });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ loc: ['query', 'entity_type'], msg: expect.stringContaining('NUL'), type: 'string_invalid_character' }]);
  });

  it('keeps the order of checks: 401, then 403, then 422', async () => {
    const bad = { project_id: PROJECT, data: { code: '\u0000' } };
    expect((await call('POST', '/entities/Shot', { body: bad })).status).toBe(401);
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', body: bad })).status).toBe(403);
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', raw: `{"data": ${deep(5000)}}` })).status).toBe(403);
  });
});

describe('a body a route does not take (422 extra_forbidden)', () => {
  it('answers every key of a non-empty object, on every kind of route', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/auth/signing-keys/rotate', 'admin-token'],
      ['DELETE', `/entities/Shot/${ID}`, 'artist-token'],
      ['POST', `/entities/Shot/${ID}/revive`, 'artist-token'],
      ['DELETE', `/auth/api-keys/${API_KEY_ID}`, 'artist-token'],
      ['GET', '/auth/api-keys', 'artist-token'],
      ['GET', `/entities/Shot/${ID}`, 'artist-token'],
      ['GET', '/healthz', ''],
    ];
    for (const [method, path, token] of cases) {
      const body = { force: true, reason: 'x' };
      const r = method === 'GET' ? await getWithBody(path, JSON.stringify(body), token || undefined) : await call(method, path, { token, body });
      expect(r.status, `${method} ${path}`).toBe(422);
      expect(r.json.detail).toEqual([
        { loc: ['body', 'force'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        { loc: ['body', 'reason'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
      ]);
    }
    const list = await call('DELETE', `/entities/Shot/${ID}`, { token: 'artist-token', body: [1] });
    expect(list.status).toBe(422);
    expect(list.json.detail).toEqual([{ loc: ['body'], msg: expect.any(String), type: 'dict_type' }]);
    expect(writes()).toEqual([]);
  });

  it('accepts no body, an empty body and {}', async () => {
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token' })).status).toBe(200);
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token', raw: '' })).status).toBe(200);
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'admin-token', body: {} })).status).toBe(200);
    expect((await getWithBody('/healthz', '{}')).status).toBe(200);
  });

  it('still puts 403 first', async () => {
    expect((await call('POST', '/auth/signing-keys/rotate', { token: 'artist-token', body: { x: 1 } })).status).toBe(403);
  });
});

describe('a body that is not JSON (415)', () => {
  it('answers 415 unsupported_media_type for a non-empty body in another content type', async () => {
    const text = await call('POST', '/entities/Shot', {
      token: 'artist-token',
      raw: JSON.stringify({ project_id: PROJECT, data: { code: 'x' } }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect(text.json).toEqual({ detail: expect.stringContaining('JSON'), code: 'unsupported_media_type' });
    const form = await call('DELETE', `/entities/Shot/${ID}`, {
      token: 'artist-token',
      raw: 'a=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(writes()).toEqual([]);
  });

  it('reads application/json with parameters, +json types and bodies without a content type', async () => {
    const body = JSON.stringify({ project_id: PROJECT, data: { code: 'x' } });
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json']) {
      expect((await call('POST', '/entities/Shot', { token: 'artist-token', raw: body, headers: { 'content-type': type } })).status, type).toBe(200);
    }
    const bare = await fetch(`${gw.url}/entities/Shot`, {
      method: 'POST',
      headers: { authorization: 'Bearer artist-token' },
      body: new Blob([body]), // a Blob without a type: no Content-Type header
    });
    expect(bare.status).toBe(200);
  });

  it('ignores the content type of an empty body, and checks roles first', async () => {
    expect((await call('POST', `/entities/Shot/${ID}/revive`, { token: 'artist-token', raw: '', headers: { 'content-type': 'text/plain' } })).status).toBe(404);
    expect((await call('POST', '/entities/Shot', { token: 'viewer-token', raw: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(403);
    expect((await call('POST', '/entities/Shot', { raw: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(401);
  });
});
