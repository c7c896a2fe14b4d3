import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { logEvent, startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const ID = '0190a0b0-0000-7000-8000-0000000000ff';

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
  for (let i = 1; i <= 5; i++) gw.state.events.push(logEvent(i));
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
});

describe('x-request-id', () => {
  it('echoes a sane id and passes it to gRPC calls', async () => {
    const r = await call('GET', '/events?limit=1', { token: 'admin-token', headers: { 'x-request-id': 'req-abc.123' } });
    expect(r.headers.get('x-request-id')).toBe('req-abc.123');
    expect(gw.state.calls.at(-1)!.ctx.requestId).toBe('req-abc.123');
  });

  it('generates one when absent or insane, on every response including errors', async () => {
    const a = await call('GET', '/nowhere');
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const b = await call('GET', '/healthz', { headers: { 'x-request-id': 'x'.repeat(200) } });
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const c = await call('GET', '/me');
    expect(c.status).toBe(401);
    expect(c.headers.get('x-request-id')).toBeTruthy();
  });
});

describe('unknown routes and methods', () => {
  it('404 for an unknown path, 405 with Allow for a wrong method', async () => {
    const nf = await call('GET', '/nowhere/at/all');
    expect(nf.status).toBe(404);
    expect(nf.json).toEqual({ detail: expect.any(String), code: 'not_found' });
    const na = await call('PUT', `/entities/Shot/${ID}`);
    expect(na.status).toBe(405);
    expect(na.json.code).toBe('method_not_allowed');
    expect(na.headers.get('allow')).toContain('PATCH');
  });

  it('a malformed percent-encoding in the path is a client error, not a 500', async () => {
    const r = await call('GET', '/entities/Sh%E0%A4%A/x', { token: 'admin-token' });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('bad_request');
  });

  it('426 for a plain GET of the WebSocket route', async () => {
    const r = await call('GET', '/events/ws');
    expect(r.status).toBe(426);
    expect(r.json.code).toBe('upgrade_required');
  });
});

describe('GET /events', () => {
  it('maps rows (changes parsed) newest first, and replays after= oldest first', async () => {
    const r = await call('GET', '/events?limit=2', { token: 'viewer-token' });
    expect(r.status).toBe(200);
    expect(r.json.items.map((e: any) => e.id)).toEqual([5, 4]);
    expect(r.json.items[0]).toEqual({
      id: 5,
      entity_type: 'Shot',
      entity_id: expect.any(String),
      project_id: null,
      action: 'update',
      actor: expect.any(String),
      changes: { n: 5 },
      created_at: expect.any(String),
    });
    const after = await call('GET', '/events?after=2&limit=10', { token: 'viewer-token' });
    expect(after.json.items.map((e: any) => e.id)).toEqual([3, 4, 5]);
  });

  it('a page cut short by the byte budget carries next_cursor, which continues it in its order', async () => {
    gw.state.eventsPageBudget = 2;
    try {
      const newest = await call('GET', '/events?limit=10', { token: 'viewer-token' });
      expect(newest.status).toBe(200);
      expect(newest.json.items.map((e: any) => e.id)).toEqual([5, 4]);
      expect(newest.json.next_cursor).toBe('before:4');
      const older = await call('GET', `/events?limit=10&cursor=${newest.json.next_cursor}`, { token: 'viewer-token' });
      expect(older.json.items.map((e: any) => e.id)).toEqual([3, 2]);
      const oldest = await call('GET', `/events?limit=10&cursor=${older.json.next_cursor}`, { token: 'viewer-token' });
      expect(oldest.json).toMatchObject({ items: [{ id: 1 }], next_cursor: null });

      const replay: number[] = [];
      let page = await call('GET', '/events?after=0&limit=10', { token: 'viewer-token' });
      replay.push(...page.json.items.map((e: any) => e.id));
      while (page.json.next_cursor) {
        expect(page.json.next_cursor).toMatch(/^after:/);
        page = await call('GET', `/events?limit=10&cursor=${page.json.next_cursor}`, { token: 'viewer-token' });
        replay.push(...page.json.items.map((e: any) => e.id));
      }
      expect(replay).toEqual([1, 2, 3, 4, 5]);
    } finally {
      gw.state.eventsPageBudget = undefined;
    }
    // A page that is not cut short says so: next_cursor is null.
    expect((await call('GET', '/events?limit=2', { token: 'viewer-token' })).json.next_cursor).toBeNull();
  });

  it('422 for a malformed cursor, or a cursor together with after', async () => {
    for (const q of ['cursor=5', 'cursor=after:x', 'cursor=sideways:3', 'cursor=before:0', 'cursor=after:3&after=1']) {
      const r = await call('GET', `/events?${q}`, { token: 'viewer-token' });
      expect(r.status, q).toBe(422);
      expect(r.json.detail).toEqual([{ loc: ['query', 'cursor'], msg: expect.any(String), type: expect.any(String) }]);
    }
  });

  it('422 for limits outside 1..1000 and non-integers, with query locs', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'greater_than_equal'],
      ['limit=1001', 'less_than_equal'],
      ['limit=abc', 'int_parsing'],
      ['after=-1', 'greater_than_equal'],
      ['project_id=x', 'uuid_parsing'],
    ];
    for (const [q, type] of cases) {
      const r = await call('GET', `/events?${q}`, { token: 'admin-token' });
      expect(r.status, q).toBe(422);
      expect(r.json.detail).toEqual([{ loc: ['query', q.split('=')[0]], msg: expect.any(String), type }]);
    }
  });
});

describe('rate limit', () => {
  it('429 with Retry-After once the burst is spent; other tokens unaffected', async () => {
    const limited = await startTestGateway({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '3' });
    const call = httpClient(() => limited.url);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call('GET', '/events?limit=1', { token: 'artist-token' })).status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    const r = await call('GET', '/events?limit=1', { token: 'artist-token' });
    expect(r.json).toEqual({ detail: expect.any(String), code: 'rate_limited' });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call('GET', '/events?limit=1', { token: 'supervisor-token' })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await call('GET', '/healthz')).status).toBe(200);
    await limited.stop();
  });
});

describe('internal errors', () => {
  it('a peer bug is a 500 without details, logged with the request id', async () => {
    const broken = Object.defineProperty({}, 'entityType', {
      get() {
        throw new TypeError('a bug');
      },
    });
    gw.state.records.set(ID, broken as never);
    const r = await call('GET', `/entities/Shot/${ID}`, { token: 'admin-token', headers: { 'x-request-id': 'boom-1' } });
    gw.state.records.delete(ID);
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ detail: 'internal error', code: 'internal' });
    const line = gw.logs.lines().find((l) => l.msg === 'request failed' && l.request_id === 'boom-1');
    expect(line).toBeDefined();
    expect(line!.level).toBe('error');
  });
});

describe('logs and metrics', () => {
  it('one request line with the route template; tokens never reach the log', async () => {
    await call('GET', `/entities/Shot/${ID}?token=supersecret-query-token`, { token: 'admin-token', headers: { 'x-request-id': 'log-1' } });
    const line = gw.logs.lines().find((l) => l.msg === 'request' && l.request_id === 'log-1')!;
    expect(line).toMatchObject({ method: 'GET', route: '/entities/{entity_type}/{id}', status: 404 });
    expect(typeof line.duration_ms).toBe('number');
    expect(String(line.url)).toContain('token=[redacted]');
    expect(gw.logs.text()).not.toContain('supersecret-query-token');
    expect(gw.logs.text()).not.toContain('admin-token');
  });

  it('RED metrics are labelled by route template, never by raw path', async () => {
    await call('GET', `/entities/Shot/${ID}`, { token: 'admin-token' });
    await call('GET', '/no/such/path/123');
    const text = (await call('GET', '/metrics', { token: 'admin-token' })).text;
    expect(text).toContain('route="/entities/{entity_type}/{id}"');
    expect(text).toContain('route="unmatched"');
    expect(text).not.toContain(ID);
    expect(text).not.toContain('/no/such/path');
  });

  it('/metrics on the API port needs an Admin token', async () => {
    const anonymous = await call('GET', '/metrics');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    for (const token of ['supervisor-token', 'artist-token', 'viewer-token', 'svc_artist']) {
      const r = await call('GET', '/metrics', { token });
      expect(r.status, token).toBe(403);
      expect(r.json.code).toBe('forbidden');
    }
    const admin = await call('GET', '/metrics', { token: 'admin-token' });
    expect(admin.status).toBe(200);
    expect(admin.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(admin.text).toContain('http_requests_total');
  });

  it('the ops port serves /healthz, /readyz and the same metrics without credentials', async () => {
    expect(gw.opsPort).not.toBe(gw.httpPort);
    const ops = `http://127.0.0.1:${gw.opsPort}`;
    await call('GET', '/healthz', { headers: { 'x-request-id': 'ops-1' } });
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('route="/healthz"');
    expect(text).toContain('http_requests_total');
    expect(await (await fetch(`${ops}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).checks).toEqual({ auth: 'ok', records: 'ok', events: 'ok', nats: 'ok' });
    gw.state.down.add('events');
    const notReady = await fetch(`${ops}/readyz`);
    expect(notReady.status).toBe(503);
    expect((await notReady.json()).detail).toBe('events is not answering');
    // The API itself is not on the ops port.
    expect((await fetch(`${ops}/me`)).status).toBe(404);
  });
});
