/**
 * Limits of the event log end to end: events near the largest size a write may produce
 * (MAX_EVENT_BYTES) are read back over HTTP in pages bounded by bytes (a short page with
 * next_cursor) and replayed over the WebSocket, never refused with a rate limit or an
 * oversized gRPC message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { bootstrapAdmin, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { openEventSocket } from './support/ws.client.js';

const LARGE = 870_000;
const WRITES = 20;

describe('event log limits (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;

  beforeAll(async () => {
    e = await startE2EStack('log-limits');
    admin = await bootstrapAdmin(e.api);
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it(`${WRITES} writes of ~870 KB: GET /events pages by bytes with next_cursor, and a since= replay gets every one`, async () => {
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Big', code: 'big' } }), 200);
    const start = await lastEventId(admin.api);
    const ids: string[] = [];
    for (let i = 0; i < WRITES; i++) {
      const description = `${i}:`.padEnd(LARGE, String.fromCharCode(97 + (i % 26)));
      const shot = expectStatus(
        await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `sh${i}`, description } }),
        200,
        `large write ${i}`,
      );
      ids.push(shot.id);
    }
    const logged = await (async () => {
      for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        const events = await eventsAfter(admin.api, start);
        if (events.length >= WRITES) return events;
      }
      throw new Error('the large events did not all reach the log');
    })();
    expect(logged.map((ev) => ev.entity_id)).toEqual(ids);
    expect(logged.every((ev) => ev.changes.description.length === LARGE)).toBe(true);

    // The default page (limit 100) is cut by its byte budget: 200 with a short page and a cursor.
    const first = await admin.api.get('/events');
    expect(first.status).toBe(200);
    expect(first.body.items.length).toBeGreaterThan(0);
    expect(first.body.items.length).toBeLessThan(WRITES);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(first.text.length).toBeLessThan(6 * 1024 * 1024);
    // Following next_cursor walks back through every event, newest first, each once.
    const seen: number[] = first.body.items.map((ev: any) => ev.id);
    let cursor: string | null = first.body.next_cursor;
    for (let pages = 0; cursor && pages < 50; pages++) {
      const page = expectStatus(await admin.api.get(`/events?cursor=${encodeURIComponent(cursor)}`), 200, 'GET /events?cursor=');
      seen.push(...page.items.map((ev: any) => ev.id));
      cursor = page.next_cursor;
    }
    expect(cursor).toBeNull();
    const last = logged.at(-1).id;
    expect(seen).toEqual(Array.from({ length: last }, (_, i) => last - i));

    // The WebSocket replay from before the first large write delivers all of them, in order.
    const socket = openEventSocket(e.stack.url, admin.token, start);
    try {
      await socket.opened;
      const messages = await socket.waitFor(WRITES, 60_000);
      expect(messages.slice(0, WRITES).map((m) => m.entity_id)).toEqual(ids);
      expect(messages.slice(0, WRITES).map((m) => m.id)).toEqual(logged.map((ev) => ev.id));
      expect(socket.ws.readyState).toBe(socket.ws.OPEN);
    } finally {
      await socket.close();
    }
  });
});
