/**
 * What a hostile client tries, against the whole stack: a User change takes effect on the very
 * next request (demoted, disabled, retired, with a login token and with an API key), an
 * anonymous register after bootstrap is 403 whatever its body, a body of 30,000 unknown keys
 * gets a short 422 (and so do 40,000 unknown `data` keys or one of 100,000 characters, which
 * records answers across the internal hop), an empty or malformed If-Match is 409 and changes
 * nothing, requests node's parser refuses still get the error shape, and a WebSocket
 * opened with a login token closes with 1008 when the token expires.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, currentSigningKey, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError } from './support/expect.helpers.js';
import { openEventSocket } from './support/ws.client.js';

const ROUNDS = 9;

describe('hardening (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let project: { id: string };

  beforeAll(async () => {
    e = await startE2EStack('hardening');
    admin = await bootstrapAdmin(e.api);
    project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Hardening', code: 'hard' } }), 200, 'create Project');
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it(`a Supervisor demoted to Viewer cannot write a Shot on the very next request (${ROUNDS} of ${ROUNDS})`, async () => {
    const sup = await createUser(admin.api, 'Supervisor', 'demoted@studio.test');
    const key = expectStatus(await sup.api.post('/auth/api-keys', { name: 'sup key' }), 200).token as string;
    const byKey = e.api.as(key);
    const user = `/entities/User/${sup.user.id}`;
    const refused: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      expectStatus(await admin.api.patch(user, { data: { role: 'Supervisor' } }), 200, 'promote');
      // Warm every cache with the Supervisor principal.
      expectStatus(await sup.api.post('/entities/Shot', { project_id: project.id, data: { code: `w${i}` } }), 200, 'write as Supervisor');
      expectStatus(await byKey.post('/entities/Shot', { project_id: project.id, data: { code: `k${i}` } }), 200, 'write by key');

      expectStatus(await admin.api.patch(user, { data: { role: 'Viewer' } }), 200, 'demote');
      const [byToken, viaKey] = await Promise.all([
        sup.api.post('/entities/Shot', { project_id: project.id, data: { code: `x${i}` } }),
        byKey.post('/entities/Shot', { project_id: project.id, data: { code: `y${i}` } }),
      ]);
      refused.push(byToken.status, viaKey.status);
    }
    expect(refused).toEqual(Array(ROUNDS * 2).fill(403));
  });

  it(`a disabled, then a retired user is refused on the very next request (${ROUNDS} of ${ROUNDS} each)`, async () => {
    const art = await createUser(admin.api, 'Artist', 'leaving@studio.test');
    const key = expectStatus(await art.api.post('/auth/api-keys', { name: 'art key' }), 200).token as string;
    const byKey = e.api.as(key);
    const user = `/entities/User/${art.user.id}`;
    const write = (api: typeof byKey, code: string) => api.post('/entities/Shot', { project_id: project.id, data: { code } });
    const disabled: number[] = [];
    const retired: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      expectStatus(await write(art.api, `a${i}`), 200, 'write as Artist');
      expectStatus(await write(byKey, `b${i}`), 200, 'write by key');
      expectStatus(await admin.api.patch(user, { data: { login_enabled: false } }), 200, 'disable');
      const [t1, k1] = await Promise.all([write(art.api, `c${i}`), write(byKey, `d${i}`)]);
      disabled.push(t1.status, k1.status);
      // Enabled again: accepted again at once (nothing stays cached as refused).
      expectStatus(await admin.api.patch(user, { data: { login_enabled: true } }), 200, 'enable');
      expectStatus(await write(art.api, `e${i}`), 200, 'write after enable');

      expectStatus(await admin.api.delete(user), 200, 'retire');
      const [t2, k2] = await Promise.all([write(art.api, `f${i}`), write(byKey, `g${i}`)]);
      retired.push(t2.status, k2.status);
      expectStatus(await admin.api.post(`${user}/revive`), 200, 'revive');
    }
    expect(disabled).toEqual(Array(ROUNDS * 2).fill(401));
    expect(retired).toEqual(Array(ROUNDS * 2).fill(401));
  });

  it('an anonymous register after bootstrap is 403 whatever its body', async () => {
    for (const body of [{ email: 'not-an-email' }, {}, { email: 'x@studio.test', password: 'long enough pw', name: 'X' }]) {
      expectError(await e.api.post('/auth/register', body), 403, 'forbidden');
    }
    expectError(await e.api.call('POST', '/auth/register', { rawBody: '{"email": ' }), 403, 'forbidden');
  });

  it('a body of 30,000 unknown keys gets a short 422 that says how many problems were left out', async () => {
    const body: Record<string, unknown> = { data: { code: 'keys' } };
    for (let i = 0; i < 30_000; i++) body[`k${i}`] = i;
    const res = await admin.api.post('/entities/Project', body);
    expect(res.status).toBe(422);
    expect(res.text.length).toBeLessThan(20_000);
    expect(res.body.detail).toHaveLength(101);
    expect(res.body.detail.at(-1)).toMatchObject({ loc: ['body'], type: 'too_many_errors' });
  });

  it('a data key of 100,000 characters and 40,000 unknown data keys get a short 422 from records, never a 500', async () => {
    const long = 'k'.repeat(100_000);
    const one = await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: 'long', [long]: 1 } });
    expect(one.status, one.text.slice(0, 500)).toBe(422);
    expect(one.body.detail).toEqual([
      { loc: ['body', 'data', `${'k'.repeat(200)}…`], msg: `Shot has no field '${'k'.repeat(200)}…'`, type: 'extra_forbidden' },
    ]);

    const data: Record<string, unknown> = { code: 'many' };
    for (let i = 0; i < 40_000; i++) data[`k${i}`] = i;
    const many = await admin.api.post('/entities/Shot', { project_id: project.id, data });
    expect(many.status, many.text.slice(0, 500)).toBe(422);
    expect(many.body.detail).toHaveLength(101);
    expect(many.body.detail[0]).toEqual({ loc: ['body', 'data', 'k0'], msg: "Shot has no field 'k0'", type: 'extra_forbidden' });
    expect(many.body.detail[100]).toEqual({ loc: ['body'], msg: '39900 more problems not listed (at most 100 are)', type: 'too_many_errors' });
  });

  it('If-Match that is empty or malformed is 409 stale_write and changes nothing; * matches the current record', async () => {
    const shot = expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: 'etag', description: 'before' } }), 200);
    const path = `/entities/Shot/${shot.id}`;
    for (const ifMatch of ['', '""', 'W/""', `"${shot.updated_at}`, `"${shot.updated_at}" x`]) {
      const patched = await admin.api.patch(path, { data: { description: 'after' } }, { headers: { 'if-match': ifMatch } });
      expectError(patched, 409, 'stale_write');
      expectError(await admin.api.delete(path, { headers: { 'if-match': ifMatch } }), 409, 'stale_write');
    }
    const unchanged = expectStatus(await admin.api.get(path), 200);
    expect(unchanged).toMatchObject({ updated_at: shot.updated_at, active: true, data: { description: 'before' } });
    expectStatus(await admin.api.patch(path, { data: { description: 'after' } }, { headers: { 'if-match': `"${shot.updated_at}"` } }), 200, 'the ETag matches');
    expectStatus(await admin.api.patch(path, { data: { description: 'any' } }, { headers: { 'if-match': '*' } }), 200, '* matches');
  });

  it('oversized headers and a smuggling-shaped request get the error body and a request id', async () => {
    const { hostname, port } = new URL(e.stack.url);
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect(Number(port), hostname);
        let out = '';
        s.setEncoding('latin1');
        s.on('data', (d: string) => (out += d));
        s.on('error', reject);
        s.on('close', () => resolve(out));
        s.on('connect', () => s.write(text, 'latin1'));
      });
    for (const [text, status, code] of [
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`, 431, 'headers_too_large'],
      ['POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, 'bad_request'],
      [
        'GET /nope HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
        404,
        'not_found',
      ],
    ] as const) {
      const out = await send(text);
      expect(out.startsWith(`HTTP/1.1 ${status} `), out.slice(0, 200)).toBe(true);
      expect(out).toMatch(/\r\nx-request-id: [^\r\n]+\r\n/i);
      expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4))).toEqual({ detail: expect.any(String), code });
    }
  });

  it("closes a WebSocket opened with a login token with 1008 at the token's expiry; one opened with an API key stays", async () => {
    // A short-lived login token signed with the service's own current key (as a login would be).
    const key = await currentSigningKey(e);
    const now = Math.floor(Date.now() / 1000);
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const input = `${enc({ alg: 'ES256', kid: key.kid, typ: 'JWT' })}.${enc({ sub: admin.user.id, iss: 'reelbase', iat: now, exp: now + 4 })}`;
    const signature = sign('sha256', Buffer.from(input), { key: createPrivateKey({ key: key.privateJwk as any, format: 'jwk' }), dsaEncoding: 'ieee-p1363' });
    // Tokens are accepted only with the low-S form of their ECDSA signature (docs/architecture.md).
    const P256_N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');
    const sValue = BigInt(`0x${signature.subarray(32).toString('hex')}`);
    const lowS = sValue > P256_N / 2n ? Buffer.from((P256_N - sValue).toString(16).padStart(64, '0'), 'hex') : signature.subarray(32);
    const shortLived = `${input}.${Buffer.concat([signature.subarray(0, 32), lowS]).toString('base64url')}`;
    expectStatus(await e.api.as(shortLived).get('/me'), 200, 'the short-lived token is valid');

    const apiKey = expectStatus(await admin.api.post('/auth/api-keys', { name: 'ws key' }), 200).token as string;
    const byToken = openEventSocket(e.stack.url, shortLived);
    const byKey = openEventSocket(e.stack.url, apiKey);
    await Promise.all([byToken.opened, byKey.opened]);
    const closed = await Promise.race([byToken.closed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000))]);
    expect(closed).toEqual({ code: 1008, reason: 'token expired' });
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(now + 4 - 0.5);
    expect(byKey.ws.readyState).toBe(byKey.ws.OPEN);
    await byKey.close();
  });
});
