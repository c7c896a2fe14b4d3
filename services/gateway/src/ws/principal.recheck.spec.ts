/**
 * Open WebSockets re-check their credential with auth on their own (WS_PRINCIPAL_RECHECK_MS),
 * so a revocation whose message never arrived still closes them; and an emergency signing-key
 * rotation closes every socket opened with a login token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';

const RECHECK_MS = 300;
let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway({ WS_PRINCIPAL_RECHECK_MS: String(RECHECK_MS) });
});
afterAll(async () => {
  await gw.stop();
});

function connect(token: string) {
  const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/events/ws?token=${token}`);
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, closed, opened };
}

const authCalls = (token: string) => gw.state.calls.filter((c) => c.method === 'authenticate' && (c.req as { token?: string }).token === token).length;

describe('WebSocket principal re-check', () => {
  it('closes a socket whose key was revoked with no revocation message, within the interval; others stay', async () => {
    gw.state.tokens.set('svc_quiet', { ...gw.state.tokens.get('svc_artist')!, apiKeyId: '0190a0b0-0000-7000-8000-0000000000bb' });
    const a = connect('svc_quiet');
    const b = connect('svc_quiet');
    const other = connect('viewer-token');
    await Promise.all([a.opened, b.opened, other.opened]);
    // Every tick asks auth once per distinct token, past the cache.
    const before = authCalls('svc_quiet');
    await new Promise((r) => setTimeout(r, RECHECK_MS * 3 + 100));
    const asked = authCalls('svc_quiet') - before;
    expect(asked).toBeGreaterThanOrEqual(2);
    expect(asked).toBeLessThanOrEqual(4);
    expect(a.ws.readyState).toBe(WebSocket.OPEN);
    // Revoked in auth; no message on the bus.
    const revokedAt = Date.now();
    gw.state.tokens.delete('svc_quiet');
    const [ca, cb] = await Promise.all([a.closed, b.closed]);
    for (const c of [ca, cb]) {
      expect([c.code, c.reason]).toEqual([1008, 'token revoked']);
      expect(c.at - revokedAt).toBeLessThan(RECHECK_MS + 250);
    }
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    other.ws.close();
  });

  it('an emergency rotation (every login token) closes token sockets and keeps API-key sockets', async () => {
    gw.state.tokens.set('coordinator-token-2', { ...gw.state.tokens.get('coordinator-token')! });
    const token = connect('coordinator-token-2');
    const key = connect('svc_artist');
    await Promise.all([token.opened, key.opened]);
    gw.state.tokens.delete('coordinator-token-2');
    const at = Date.now();
    gw.bus.emit('revocation', { all_tokens: true });
    const closed = await token.closed;
    expect(closed.code).toBe(1008);
    expect(closed.at - at).toBeLessThan(RECHECK_MS);
    expect(key.ws.readyState).toBe(WebSocket.OPEN);
    key.ws.close();
  });
});
