/**
 * Answers produced outside express (node's parser refusals, refused upgrades, request
 * timeouts) carry `x-request-id` and the `{"detail","code"}` body and are logged, like every
 * other answer. Sent over raw sockets, since no HTTP client sends these requests.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ REQUEST_TIMEOUT_MS: '1500' });
});
afterAll(async () => {
  await gw.stop();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from the first byte sent to the socket's close. */
  ms: number;
}

/** Writes `chunks` (a string is one chunk; delays between array items) and reads until close. */
function raw(chunks: string | Array<string | number>, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(gw.httpPort, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got ${JSON.stringify(text)}`));
    }, timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = text.split('\r\n\r\n', 2) as [string?, string?];
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body, ms: Date.now() - started });
    });
    const send = async () => {
      for (const c of typeof chunks === 'string' ? [chunks] : chunks) {
        if (typeof c === 'number') await new Promise((r) => setTimeout(r, c));
        else if (!socket.destroyed) socket.write(c, 'latin1');
      }
    };
    socket.on('connect', () => void send().catch(reject));
  });
}

function expectErrorShape(a: RawAnswer, status: number, code: string): void {
  expect(a.status).toBe(status);
  expect(a.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:\-/+=]{1,128}$/);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body);
  expect(body).toEqual({ detail: expect.any(String), code });
  // Logged with the same request id.
  const logged = gw.logs.lines().find((l) => l.request_id === a.headers['x-request-id']);
  expect(logged).toMatchObject({ status });
}

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

describe('answers outside express', () => {
  it('431 for oversized headers and for an oversized query string', async () => {
    expectErrorShape(await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'headers_too_large');
    expectErrorShape(await raw(`GET /events?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431, 'headers_too_large');
  });

  it('400 for request-smuggling shapes and control characters', async () => {
    const cases = [
      'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
      'POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n',
      'GET /heal\u0007thz HTTP/1.1\r\nHost: x\r\n\r\n',
    ];
    for (const c of cases) expectErrorShape(await raw(c), 400, 'bad_request');
  });

  it('400 for an HTTP/1.1 request without Host', async () => {
    const a = await raw('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expectErrorShape(a, 400, 'bad_request');
  });

  it('404 for an upgrade on another path; the handshake refusals ws would send bare', async () => {
    const up = (path: string, extra = '', key = KEY, method = 'GET') =>
      `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;
    expectErrorShape(await raw(up('/entities/Shot')), 404, 'not_found');
    expectErrorShape(await raw(up('/events/ws?token=admin-token', '', 'short')), 400, 'bad_request');
    expectErrorShape(await raw(up('/events/ws?token=admin-token', 'Sec-WebSocket-Protocol: a,,b\r\n')), 400, 'bad_request');
    expectErrorShape(await raw(up('/events/ws?token=admin-token').replace('Version: 13', 'Version: 7')), 400, 'bad_request');
    expectErrorShape(await raw(up('/events/ws?token=admin-token', '', KEY, 'POST')), 405, 'method_not_allowed');
  });

  it('408 for a body trickled byte by byte past REQUEST_TIMEOUT_MS, not a socket held for minutes', async () => {
    const body = '{"email":"a@b.c","password":"x"}';
    const chunks: Array<string | number> = [`POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`];
    for (const ch of body) chunks.push(500, ch);
    const a = await raw(chunks);
    expectErrorShape(a, 408, 'request_timeout');
    expect(a.ms).toBeLessThan(4000);
  });

  it('408 for headers that never finish', async () => {
    const a = await raw(['GET /healthz HTTP/1.1\r\nHost: x\r\n', 800, 'X-A: 1\r\n', 800, 'X-B: 2\r\n', 800, 'X-C: 3\r\n']);
    expectErrorShape(a, 408, 'request_timeout');
  });
});
