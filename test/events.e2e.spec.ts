/**
 * Events end to end: every write produces exactly one event with the right action, actor and
 * changes; GET /events orders and filters it; the WebSocket carries the same events in id order,
 * refuses a bad token with 1008, and resumes with since= without gap or duplicate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { openEventSocket } from './support/ws.client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until exactly `n` events follow `after`, then a little longer to catch any extra one. */
async function exactlyEventsAfter(e: E2EStack, api: Session['api'], after: number, n: number): Promise<any[]> {
  await eventually(async () => ((await eventsAfter(api, after)).length >= n ? true : undefined), 20_000, `${n} events after ${after}`);
  await sleep(1000);
  const events = await eventsAfter(api, after);
  expect(events.map((ev) => `${ev.id} ${ev.entity_type} ${ev.action}`)).toHaveLength(n);
  return events;
}

describe('events: log, filters, live WebSocket, resume (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;

  beforeAll(async () => {
    e = await startE2EStack('events');
    admin = await bootstrapAdmin(e.api);
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('logs one event per write, newest first, after= oldest first, filterable; the socket gets the same in id order', async () => {
    // The bootstrap registration is a write too (the User record); the schema's seeded definitions
    // (Schema.* events) are logged at the stack's first start as well.
    const recordEvents = async () => (await eventsAfter(admin.api, 0)).filter((ev) => !String(ev.entity_type).startsWith('Schema.'));
    await eventually(async () => ((await recordEvents()).length >= 1 ? true : undefined), 20_000, 'the User event');
    await sleep(1000);
    const userEvents = await recordEvents();
    expect(userEvents).toHaveLength(1);
    expect(userEvents[0]).toMatchObject({ entity_type: 'User', entity_id: admin.user.id, action: 'create' });

    const start = await lastEventId(admin.api);
    const socket = openEventSocket(e.stack.url, admin.token);
    await socket.opened;

    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Events', code: 'ev' } }), 200);
    const shot = expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: 'sh010', cut_in: 1001 } }), 200);
    const path = `/entities/Shot/${shot.id}`;
    expectStatus(await admin.api.patch(path, { data: { description: 'hero', cut_in: null } }), 200);
    expectStatus(await admin.api.delete(path), 200);
    expectStatus(await admin.api.post(`${path}/revive`), 200);

    const events = await exactlyEventsAfter(e, admin.api, start, 5);
    expect(events.map((ev) => ev.id)).toEqual([start + 1, start + 2, start + 3, start + 4, start + 5]);
    expect(events.map((ev) => [ev.entity_type, ev.entity_id, ev.action])).toEqual([
      ['Project', project.id, 'create'],
      ['Shot', shot.id, 'create'],
      ['Shot', shot.id, 'update'],
      ['Shot', shot.id, 'delete'],
      ['Shot', shot.id, 'create'],
    ]);
    for (const ev of events) {
      expect(ev.actor).toBe(admin.user.id);
      expect(ev.created_at).toEqual(expect.any(String));
    }
    expect(events.slice(1).every((ev) => ev.project_id === project.id)).toBe(true);
    const [pCreate, sCreate, sUpdate, sDelete, sRevive] = events;
    expect(pCreate.changes).toMatchObject({ name: 'Events', code: 'ev' });
    expect(sCreate.changes).toMatchObject({ code: 'sh010', cut_in: 1001, project_id: project.id });
    expect(sUpdate.changes).toMatchObject({ description: 'hero', cut_in: null });
    expect(sUpdate.changes).not.toHaveProperty('code');
    expect(sDelete.changes).toEqual({});
    expect(sRevive.changes).toMatchObject({ revived: true, code: 'sh010', description: 'hero' });

    // Newest first without after=.
    const newest = expectStatus(await admin.api.get('/events?limit=3'), 200).items;
    expect(newest.map((ev: any) => ev.id)).toEqual([start + 5, start + 4, start + 3]);
    // after= pages oldest first.
    const page = expectStatus(await admin.api.get(`/events?after=${start + 1}&limit=2`), 200).items;
    expect(page.map((ev: any) => ev.id)).toEqual([start + 2, start + 3]);
    // Filters.
    const shots = expectStatus(await admin.api.get('/events?entity_type=Shot&limit=1000'), 200).items;
    expect(shots.map((ev: any) => ev.id)).toEqual([start + 5, start + 4, start + 3, start + 2]);
    const byProject = expectStatus(await admin.api.get(`/events?project_id=${project.id}&limit=1000`), 200).items;
    expect(byProject.every((ev: any) => ev.project_id === project.id)).toBe(true);
    expect(byProject.map((ev: any) => ev.id)).toEqual(expect.arrayContaining([start + 5, start + 4, start + 3, start + 2]));
    const projects = expectStatus(await admin.api.get(`/events?entity_type=Project&after=${start}`), 200).items;
    expect(projects.map((ev: any) => ev.id)).toEqual([start + 1]);

    // The live socket carried exactly the logged events, in id order.
    const live = await socket.waitFor(5);
    await sleep(500);
    expect(live).toEqual(events);
    await socket.close();
  });

  it('delivers a write made the moment the socket opens (no since=): the socket is live before open', async () => {
    for (let round = 0; round < 5; round++) {
      const socket = openEventSocket(e.stack.url, admin.token);
      await socket.opened;
      const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: `Open ${round}`, code: `open_${round}` } }), 200);
      const got = await socket.waitFor(1, 10_000);
      expect(got[0]).toMatchObject({ entity_id: project.id, action: 'create' });
      await socket.close();
    }
  });

  it('closes a live socket with 1008 within seconds when its API key is revoked', async () => {
    const issued = expectStatus(await admin.api.post('/auth/api-keys', { name: 'ws watcher' }), 200);
    const socket = openEventSocket(e.stack.url, issued.token);
    await socket.opened;
    const t0 = Date.now();
    expectStatus(await admin.api.delete(`/auth/api-keys/${issued.id}`), 200, 'revoke');
    const closed = await socket.closed;
    expect(closed.code).toBe(1008);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('closes a socket with a bad token with 1008 and sends it nothing', async () => {
    for (const token of ['not-a-token', 'svc_0000000000000000000000000000']) {
      const socket = openEventSocket(e.stack.url, token);
      // A write while the socket is open must not reach it.
      await admin.api.post('/entities/Project', { data: { name: `bad ${token}`, code: `bad_${token.length}` } });
      const closed = await Promise.race([socket.closed, sleep(10_000).then(() => ({ code: -1, reason: 'not closed within 10 s' }))]);
      expect(closed.code).toBe(1008);
      expect(socket.messages).toEqual([]);
    }
  });

  it('resumes with since= after a disconnect: nothing missed, nothing repeated', async () => {
    const project = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Resume', code: 'resume' } }), 200);
    await eventually(async () => ((await eventsAfter(admin.api, 0)).some((ev) => ev.entity_id === project.id) ? true : undefined));
    const first = openEventSocket(e.stack.url, admin.token);
    await first.opened;
    for (let i = 0; i < 3; i++) {
      expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `live${i}` } }), 200);
    }
    const seen = await first.waitFor(3);
    const cursor = seen[seen.length - 1].id;
    await first.close();

    for (let i = 0; i < 4; i++) {
      expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `away${i}` } }), 200);
    }
    // Let the log take them before reconnecting, so the replay has them to send.
    await eventually(async () => ((await eventsAfter(admin.api, cursor)).length >= 4 ? true : undefined));

    const second = openEventSocket(e.stack.url, admin.token, cursor);
    await second.opened;
    for (let i = 0; i < 3; i++) {
      expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `back${i}` } }), 200);
    }
    const resumed = await second.waitFor(7);
    await sleep(1000);
    expect(resumed.map((ev) => ev.id)).toEqual(Array.from({ length: 7 }, (_, i) => cursor + 1 + i));
    expect(resumed.map((ev) => ev.changes.code)).toEqual(['away0', 'away1', 'away2', 'away3', 'back0', 'back1', 'back2']);
    expect(resumed).toEqual(await eventsAfter(admin.api, cursor));
    await second.close();

    // Replaying from the very start gives the whole log in order, then live.
    const all = await eventsAfter(admin.api, 0);
    const replay = openEventSocket(e.stack.url, admin.token, 0);
    await replay.waitFor(all.length);
    expect(replay.messages.map((ev) => ev.id)).toEqual(all.map((ev) => ev.id));
    await replay.close();
  });
});
