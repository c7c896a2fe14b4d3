/**
 * WebSocket limits: connects per client address and in all, and a socket opened with a login
 * token closes with 1008 when that token expires.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

interface Outcome {
  /** The HTTP status of a refused handshake, or 101. */
  status: number;
  body?: any;
  requestId?: string;
  ws?: WebSocket;
}

function open(url: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve({ status: 101, ws }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), requestId: String(res.headers['x-request-id']) }));
    });
    ws.once('error', (err) => {
      if (!String(err.message).startsWith('Unexpected server response')) reject(err);
    });
  });
}

const wsUrl = (g: TestGateway, token = 'admin-token') => `${g.url.replace('http', 'ws')}/events/ws?token=${token}`;

describe('WebSocket limits', () => {
  it('limits connects per client address (429 with Retry-After) and open sockets in all (503)', async () => {
    gw = await startTestGateway({ WS_CONNECT_RPS: '1', WS_CONNECT_BURST: '3', WS_MAX_CONNECTIONS: '100' });
    const ok = [await open(wsUrl(gw)), await open(wsUrl(gw)), await open(wsUrl(gw))];
    expect(ok.map((o) => o.status)).toEqual([101, 101, 101]);
    const limited = await open(wsUrl(gw));
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ detail: expect.any(String), code: 'rate_limited' });
    expect(limited.requestId).toBeTruthy();
    for (const o of ok) o.ws!.close();
    await gw.stop();

    gw = await startTestGateway({ WS_CONNECT_RPS: '100', WS_CONNECT_BURST: '100', WS_MAX_CONNECTIONS: '2' });
    const two = [await open(wsUrl(gw)), await open(wsUrl(gw))];
    expect(two.map((o) => o.status)).toEqual([101, 101]);
    const full = await open(wsUrl(gw));
    expect(full.status).toBe(503);
    expect(full.body).toEqual({ detail: expect.any(String), code: 'unavailable' });
    two[0]!.ws!.close();
    await new Promise((r) => setTimeout(r, 100));
    const again = await open(wsUrl(gw));
    expect(again.status).toBe(101);
    again.ws!.close();
    two[1]!.ws!.close();
  });

  it("closes a socket opened with a login token with 1008 when the token expires; an API key's stays open", async () => {
    gw = await startTestGateway();
    gw.state.tokenExpiry = new Map([['artist-token', Math.floor(Date.now() / 1000) + 2]]);
    const byToken = await open(wsUrl(gw, 'artist-token'));
    const byKey = await open(wsUrl(gw, 'svc_artist'));
    expect([byToken.status, byKey.status]).toEqual([101, 101]);
    const started = Date.now();
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      byToken.ws!.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    expect(closed).toEqual({ code: 1008, reason: 'token expired' });
    expect(Date.now() - started).toBeLessThan(3500);
    expect(byKey.ws!.readyState).toBe(WebSocket.OPEN);
    byKey.ws!.close();
  });
});
