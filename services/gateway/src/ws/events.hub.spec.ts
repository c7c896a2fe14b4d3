import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { contractEventFromProto } from '@reelbase/lib-platform';
import { API_KEY_ID, logEvent, startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { until, wsClient } from '../../test/support/ws.js';

let gw: TestGateway;

beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
});

const connect = (query: string) => wsClient(gw.url, query);

/** Appends to the fake log and announces it live, as the events service does. */
function append(id: number, entityType = 'Shot', entityId?: string, live = true) {
  const e = logEvent(id, entityType, entityId);
  gw.state.events.push(e);
  if (live) {
    const row = contractEventFromProto(e);
    gw.bus.emit('event', { row, text: JSON.stringify(row) });
  }
}

describe('WS /events/ws', () => {
  it('completes the handshake, then closes 1008 on a missing or invalid token before any message', async () => {
    for (const q of ['', '?token=', '?token=not-a-token', '?token=admin-token&since=abc']) {
      const c = connect(q);
      await c.opened; // the handshake completed (a refused one would be 1006)
      const { code } = await c.closed;
      expect(code, q).toBe(1008);
      expect(c.messages).toEqual([]);
    }
  });

  it('is live by the time the client sees open: an event appended right then is delivered', async () => {
    gw.state.eventsLatencyMs = 150; // a slow log read widens the window between handshake and registration
    try {
      for (let round = 0; round < 3; round++) {
        const c = connect('?token=admin-token');
        await c.opened;
        const id = gw.state.events.length + 1;
        append(id);
        await until(() => c.messages.length > 0);
        expect(c.messages.map((m) => m.id)).toEqual([id]);
        c.ws.close();
        await c.closed;
      }
    } finally {
      gw.state.eventsLatencyMs = 0;
    }
  });

  it('never logs the token of the query string', async () => {
    const c = connect('?token=very-secret-ws-token');
    await c.closed;
    expect(gw.logs.text()).not.toContain('very-secret-ws-token');
    expect(gw.logs.text()).toContain('token=[redacted]');
  });

  it('without since: starts at the end of the log, then live in order, duplicates dropped', async () => {
    gw.state.events.length = 0;
    for (let i = 1; i <= 3; i++) append(i, 'Shot', undefined, false);
    const c = connect('?token=artist-token');
    await c.opened;
    await until(() => gw.state.calls.some((x) => x.method === 'listEvents' && (x.req as { limit: number }).limit === 1));
    await new Promise((r) => setTimeout(r, 50));
    append(4);
    append(5);
    gw.bus.emit('event', { row: contractEventFromProto(gw.state.events[3]!), text: JSON.stringify(contractEventFromProto(gw.state.events[3]!)) }); // duplicate 4
    append(6, 'Shot', undefined, false); // missed live: recovered from the log when 7 arrives
    append(7);
    await until(() => c.messages.length >= 4);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.messages.map((m) => m.id)).toEqual([4, 5, 6, 7]);
    expect(c.messages[0]).toMatchObject({ entity_type: 'Shot', action: 'update', changes: { n: 4 } });
    c.ws.close();
  });

  it('since=N replays the log, then continues live with no gap and no duplicate', async () => {
    gw.state.events.length = 0;
    for (let i = 1; i <= 10; i++) append(i, 'Shot', undefined, false);
    const c = connect('?token=admin-token&since=4');
    await c.opened;
    append(11);
    append(12);
    await until(() => c.messages.length >= 8);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.messages.map((m) => m.id)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
    c.ws.close();
  });

  it('closes with 1008 within seconds when its API key is revoked; other sockets stay', async () => {
    const keySocket = connect('?token=svc_artist');
    const other = connect('?token=supervisor-token');
    await Promise.all([keySocket.opened, other.opened]);
    await until(() => gw.state.calls.filter((x) => x.method === 'authenticate').length > 0);
    await new Promise((r) => setTimeout(r, 50));
    gw.state.tokens.delete('svc_artist');
    gw.bus.emit('revocation', { api_key_id: API_KEY_ID, user_id: USERS.artist.id });
    const { code } = await keySocket.closed;
    expect(code).toBe(1008);
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    other.ws.close();
  });

  it('a User event re-checks that user’s sockets: still valid stays open, disabled closes 1008', async () => {
    const c = connect('?token=viewer-token');
    await c.opened;
    await new Promise((r) => setTimeout(r, 50));
    append(gw.state.events.length + 1, 'User', USERS.viewer.id);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    gw.state.tokens.delete('viewer-token');
    append(gw.state.events.length + 1, 'User', USERS.viewer.id);
    const { code } = await c.closed;
    expect(code).toBe(1008);
    expect(c.messages.length).toBeGreaterThanOrEqual(1);
  });

  it('re-checks again when a revocation arrives while a re-check is running', async () => {
    gw.state.tokens.set('svc_racer', { ...gw.state.tokens.get('svc_artist')! });
    const c = connect('?token=svc_racer');
    await c.opened;
    await new Promise((r) => setTimeout(r, 50));
    gw.state.authLatencyMs = 200;
    try {
      // A User event starts a re-check that reads the token while it is still valid ...
      append(gw.state.events.length + 1, 'User', USERS.artist.id);
      await new Promise((r) => setTimeout(r, 50));
      // ... and the key is revoked while that check is still in flight.
      gw.state.tokens.delete('svc_racer');
      gw.bus.emit('revocation', { api_key_id: API_KEY_ID, user_id: USERS.artist.id });
      const { code } = await c.closed;
      expect(code).toBe(1008);
    } finally {
      gw.state.authLatencyMs = 0;
    }
  });

  it('turns away a handshake that completes while the hub is closing', async () => {
    const own = await startTestGateway();
    own.state.eventsLatencyMs = 300; // admission is still running when stop() begins
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/events/ws?token=admin-token`);
    ws.on('error', () => {});
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise((r) => setTimeout(r, 50));
    const stopped = own.stop();
    expect([1001, 1006]).toContain(await closed);
    await stopped; // resolves: nothing left hanging
  });

  it('closes open sockets with 1001 on stop', async () => {
    const own = await startTestGateway();
    const ws = new WebSocket(`${own.url.replace('http', 'ws')}/events/ws?token=admin-token`);
    await new Promise((r) => ws.once('open', r));
    await new Promise((r) => setTimeout(r, 50));
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await own.stop();
    expect(await closed).toBe(1001);
  });
});
