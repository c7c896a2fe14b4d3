import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Conflict, ConnectionError, NotFound, RateLimited, TimeoutError, ValidationError } from './errors.js';
import { Reelbase } from './reelbase.client.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const servers: Server[] = [];

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const fast = { backoffMs: 1, maxBackoffMs: 5 };
const record = (id: string) => ({ id, entity_type: 'Shot', data: {} });

describe('Reelbase client', () => {
  it('keeps one Idempotency-Key across the retries of a create', async () => {
    const keys: (string | undefined)[] = [];
    const url = await serve((req, res) => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      if (keys.length < 3) return json(res, 503, { detail: 'down', code: 'unavailable' });
      json(res, 200, record('r1'));
    });
    const rb = new Reelbase({ url, apiKey: 'svc_secret', retry: fast });
    const r = await rb.create('Shot', { code: 'SH010' }, { project_id: 'p1' });
    expect(r.id).toBe('r1');
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
  });

  it('retries a POST whose connection is cut before the answer, with the same key', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(String(req.headers['idempotency-key']));
      if (seen.length === 1) return req.socket.destroy();
      json(res, 200, record('r2'));
    });
    const rb = new Reelbase({ url, apiKey: 'svc_secret', retry: fast });
    expect((await rb.create('Shot', {})).id).toBe('r2');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
  });

  it('does not repeat a PATCH whose connection was cut (it may have been applied)', async () => {
    let calls = 0;
    const url = await serve((req) => {
      calls++;
      req.socket.destroy();
    });
    const rb = new Reelbase({ url, apiKey: 'k', retry: fast });
    await expect(rb.update('Shot', 'x', { a: 1 })).rejects.toBeInstanceOf(ConnectionError);
    expect(calls).toBe(1);
  });

  it('waits as long as Retry-After says on 429, then succeeds', async () => {
    const times: number[] = [];
    const url = await serve((_req, res) => {
      times.push(Date.now());
      if (times.length === 1) return json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '1' });
      json(res, 200, record('r3'));
    });
    const rb = new Reelbase({ url, apiKey: 'k', retry: fast });
    await rb.get('Shot', 'r3');
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the retries with the typed error, and never retries a 422', async () => {
    let calls = 0;
    const url = await serve((_req, res) => {
      calls++;
      json(res, 429, { detail: 'slow down', code: 'rate_limited' }, { 'retry-after': '0' });
    });
    const rb = new Reelbase({ url, apiKey: 'k', retry: { ...fast, retries: 2 } });
    const err = await rb.get('Shot', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimited);
    expect(calls).toBe(3);

    let bad = 0;
    const url2 = await serve((_req, res) => {
      bad++;
      json(res, 422, { detail: [{ loc: ['body', 'data', 'code'], msg: 'Field required', type: 'missing' }] });
    });
    const e2 = await new Reelbase({ url: url2, apiKey: 'k', retry: fast }).create('Shot', {}).catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(ValidationError);
    expect((e2 as ValidationError).problems[0]!.loc).toEqual(['body', 'data', 'code']);
    expect((e2 as ValidationError).status).toBe(422);
    expect(bad).toBe(1);
  });

  it('maps statuses to error classes with status, code and detail', async () => {
    const url = await serve((req, res) => {
      if (req.url!.includes('missing')) return json(res, 404, { detail: 'no such record', code: 'not_found' });
      json(res, 409, { detail: 'changed since', code: 'stale_write' });
    });
    const rb = new Reelbase({ url, apiKey: 'k' });
    const nf = (await rb.get('Shot', 'missing').catch((e: unknown) => e)) as NotFound;
    expect(nf).toBeInstanceOf(NotFound);
    expect([nf.status, nf.code, nf.detail]).toEqual([404, 'not_found', 'no such record']);
    const c = (await rb.update('Shot', 'x', {}, { ifMatch: '2026' }).catch((e: unknown) => e)) as Conflict;
    expect(c).toBeInstanceOf(Conflict);
    expect(c.code).toBe('stale_write');
  });

  it('times out a silent server (read timeout) instead of hanging', async () => {
    const url = await serve(() => undefined);
    const rb = new Reelbase({ url, apiKey: 'k', readTimeoutMs: 200, retry: { retries: 0 } });
    const started = Date.now();
    const err = await rb.get('Shot', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).code).toBe('read_timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('never shows the API key: not in inspect, JSON, or errors', async () => {
    const url = await serve((_req, res) => json(res, 401, { detail: 'invalid token', code: 'unauthenticated' }));
    const rb = new Reelbase({ url, apiKey: 'svc_TOPSECRET' });
    expect(inspect(rb, { showHidden: true, depth: 5 })).not.toContain('TOPSECRET');
    expect(JSON.stringify(rb)).not.toContain('TOPSECRET');
    const err = await rb.me().catch((e: unknown) => e);
    expect(inspect(err, { depth: 5 })).not.toContain('TOPSECRET');
  });

  it('follows cursors page by page and stops at the limit', async () => {
    const bodies: any[] = [];
    const url = await serve((_req, res, body) => {
      const b = JSON.parse(body);
      bodies.push(b);
      const start = b.cursor ? Number(b.cursor) : 0;
      const items = Array.from({ length: Math.min(b.limit, 7 - start) }, (_, i) => record(`r${start + i}`));
      json(res, 200, { items, next_cursor: start + items.length < 7 ? String(start + items.length) : null });
    });
    const rb = new Reelbase({ url, apiKey: 'k' });
    const all = await rb.find('Shot', [['code', 'is', 'x']], { pageSize: 3 });
    expect(all.map((r) => r.id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    expect(bodies.map((b) => b.cursor)).toEqual([undefined, '3', '6']);
    expect((await rb.find('Shot', [], { pageSize: 3, limit: 4 })).length).toBe(4);
    expect((await rb.findOne('Shot'))?.id).toBe('r0');
  });

  it('follows events across failures without a gap or a duplicate', async () => {
    const log = Array.from({ length: 12 }, (_, i) => ({ id: i + 1, entity_type: 'Shot', action: 'create', changes: {} }));
    let calls = 0;
    const url = await serve((req, res) => {
      calls++;
      if (calls === 2 || calls === 3) return req.socket.destroy();
      if (calls === 4) return json(res, 503, { detail: 'down', code: 'unavailable' });
      const after = Number(new URL(req.url!, 'http://x').searchParams.get('after'));
      json(res, 200, { items: log.filter((e) => e.id > after).slice(0, 5), next_cursor: null });
    });
    const rb = new Reelbase({ url, apiKey: 'k', retry: { retries: 0 } });
    const stop = new AbortController();
    const seen: number[] = [];
    const errors: unknown[] = [];
    for await (const ev of rb.events({ after: 0, follow: true, pageSize: 5, pollMs: 10, signal: stop.signal, onError: (e) => errors.push(e) })) {
      seen.push(ev.id);
      if (seen.length === 12) stop.abort();
    }
    expect(seen).toEqual(log.map((e) => e.id));
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  it('request() answers every status without throwing', async () => {
    const url = await serve((req, res) => json(res, 418, { got: req.headers.authorization ?? null }));
    const rb = new Reelbase({ url, apiKey: 'k' });
    const a = await rb.request('GET', '/x', { token: 'other' });
    expect(a.status).toBe(418);
    expect(a.body).toEqual({ got: 'Bearer other' });
    expect((await rb.request('GET', '/x', { token: null })).body).toEqual({ got: null });
  });
});
