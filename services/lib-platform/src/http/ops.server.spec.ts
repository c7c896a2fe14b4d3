import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { Readiness } from '../readiness.js';
import { startOpsServer } from './ops.server.js';

describe('ops server', () => {
  let dbUp = true;
  const metrics = new Metrics('ops-test');
  const readiness = new Readiness(100).add('db', async () => {
    if (!dbUp) throw new Error('connection refused');
  });
  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  let base: string;

  beforeAll(async () => {
    ops = await startOpsServer({ port: 0, host: '127.0.0.1', metrics, readiness, logger: createLogger('ops-test', 'silent') });
    base = `http://127.0.0.1:${ops.port}`;
  });
  afterAll(async () => ops?.close());

  it('listens on an ephemeral port', () => {
    expect(ops.port).toBeGreaterThan(0);
  });

  it('answers /healthz with 200 {"status":"ok"}', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 when every check passes, 503 naming the failing one otherwise', async () => {
    dbUp = true;
    const ok = await fetch(`${base}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ready', checks: { db: 'ok' } });

    dbUp = false;
    const down = await fetch(`${base}/readyz?verbose=1`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({
      status: 'unavailable',
      detail: 'db is not answering',
      code: 'unavailable',
      checks: { db: 'connection refused' },
    });
    dbUp = true;
  });

  it('serves Prometheus text labelled with the service', async () => {
    metrics.httpRequests.inc({ method: 'GET', route: '/x', status: '200' });
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/x"[^}]*service="ops-test"[^}]*\} 1/);
    expect(text).toMatch(/process_cpu_user_seconds_total\{service="ops-test"\}/);
  });

  it('answers 404 for other paths', async () => {
    const res = await fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'not found', code: 'not_found' });
  });

  it('answers 405 for anything but GET', async () => {
    for (const path of ['/healthz', '/metrics', '/readyz']) {
      const res = await fetch(`${base}${path}`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(405);
      expect(await res.json()).toEqual({ detail: 'method not allowed', code: 'method_not_allowed' });
    }
  });
});
