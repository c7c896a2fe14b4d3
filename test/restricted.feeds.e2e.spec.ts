/**
 * Restricted projects and the feeds, against the whole stack (docs/api-notes.md, "Restricted
 * projects", "Events", "Sync"): `GET /events` (newest first, `after=`, `project_id=`,
 * `entity_type=`), the WebSocket (live and `since=` replay) and `GET /sync/changes` never carry an
 * event of a project the caller may not read — its records', its site-sync states' and its farm
 * jobs' included — while members and Admins get them all; and a member who loses access stops
 * receiving the project's events on their live WebSocket within 2 s, the socket staying open and
 * the open project's events still arriving on it.
 */
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { eventsAfter, type Session } from './support/e2e.stack.js';
import { barrierShot, create, expectHidden, isHiddenEvent, useRestrictedWorld, userLink, type RestrictedWorld } from './support/restricted.fixture.js';
import { openEventSocket, type EventSocket } from './support/ws.client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `socket` received an event matching `pred` (rejects after `timeoutMs`). */
async function socketSaw(socket: EventSocket, pred: (ev: any) => boolean, what: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = socket.messages.find(pred);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`${what}: not received within ${timeoutMs} ms (${socket.messages.length} messages)`);
    await sleep(50);
  }
}

/** Every item of `GET /sync/changes` after 0, page by page until it is up to date. */
async function changesAfter(api: Api, query = ''): Promise<any[]> {
  const out: any[] = [];
  let after = 0;
  for (let page = 0; page < 1000; page++) {
    const body = expectStatus(await api.get(`/sync/changes?after=${after}&limit=1000${query}`), 200, 'GET /sync/changes');
    out.push(...(body.items as any[]));
    if (body.next_after === after) return out;
    after = body.next_after as number;
  }
  throw new Error('GET /sync/changes did not come up to date');
}

const ascending = (evs: any[]) => evs.every((ev, i) => i === 0 || ev.id > evs[i - 1].id);

describe('restricted projects: events, WebSocket, sync changes (whole stack)', () => {
  let w: RestrictedWorld;
  useRestrictedWorld('restricted-feeds', (world) => (w = world));

  /** The world's restricted records whose `create` every reader of the project finds in a feed. */
  const hiddenCreates = () => [w.restricted.project, w.restricted.shot, w.restricted.task, w.restricted.note, w.crossNote, w.restricted.farmJob];
  const sawCreates = (evs: any[]) => hiddenCreates().every((r) => evs.some((ev) => ev.entity_id === r.id && ev.action === 'create'));

  it("GET /events leaves the restricted project's events out for a non-member: newest first, after=, project_id=, entity_type=", async () => {
    const barrier = await barrierShot(w, 'events');
    const R = w.restricted.project.id;
    const outsiderAll = await eventually(
      async () => {
        const evs = await eventsAfter(w.outsider.api, 0);
        return evs.some((ev) => ev.entity_id === barrier.id) ? evs : undefined;
      },
      20_000,
      'the barrier in the outsider’s log',
    );
    expect(outsiderAll.filter((ev) => isHiddenEvent(w, ev))).toEqual([]);
    expect(ascending(outsiderAll)).toBe(true);
    expect(outsiderAll.some((ev) => ev.entity_id === w.open.shot.id && ev.action === 'create')).toBe(true);
    expect(outsiderAll.some((ev) => ev.entity_id === w.crossShot.id)).toBe(true);

    for (const s of [w.member, w.admin]) {
      const all = await eventsAfter(s.api, 0);
      expect(sawCreates(all)).toBe(true);
      // Every kind the project writes is in the log for its readers: records, farm jobs, site-sync states.
      expect(['Shot', 'FarmJob', 'SiteSync'].every((t) => all.some((ev) => ev.entity_type === t && ev.project_id === R))).toBe(true);
    }

    // Newest first, without after=.
    const newest = expectStatus(await w.outsider.api.get('/events?limit=1000'), 200).items as any[];
    expect(newest.some((ev) => ev.entity_id === barrier.id)).toBe(true);
    expect(newest.filter((ev) => isHiddenEvent(w, ev))).toEqual([]);
    const memberNewest = expectStatus(await w.member.api.get('/events?limit=1000'), 200).items as any[];
    expect(memberNewest.some((ev) => ev.project_id === R)).toBe(true);

    // project_id= the restricted project: nothing, with and without after=.
    expect(expectStatus(await w.outsider.api.get(`/events?project_id=${R}&limit=1000`), 200).items).toEqual([]);
    expect(expectStatus(await w.outsider.api.get(`/events?project_id=${R}&after=0&limit=1000`), 200).items).toEqual([]);
    const memberProject = await eventsAfter(w.member.api, 0, `&project_id=${R}`);
    expect(memberProject.length).toBeGreaterThan(0);
    expect(memberProject.every((ev) => ev.project_id === R)).toBe(true);
    expect(sawCreates(memberProject)).toBe(true);
    // project_id= the open project: all of it.
    const openEvents = await eventsAfter(w.outsider.api, 0, `&project_id=${w.open.project.id}`);
    expect(openEvents.some((ev) => ev.entity_id === barrier.id)).toBe(true);

    // entity_type=: the open Shots, none of the restricted ones.
    for (const type of ['Shot', 'Note', 'FarmJob', 'SiteSync', 'Project']) {
      const evs = await eventsAfter(w.outsider.api, 0, `&entity_type=${type}`);
      expect(
        evs.filter((ev) => isHiddenEvent(w, ev)),
        `entity_type=${type}`,
      ).toEqual([]);
      expect(evs.length, `entity_type=${type}`).toBeGreaterThan(0);
    }
  });

  it('the live WebSocket carries the restricted project’s events to members and Admins only', async () => {
    const sockets: Record<string, EventSocket> = {};
    for (const [name, s] of [
      ['outsider', w.outsider],
      ['member', w.member],
      ['admin', w.admin],
    ] as Array<[string, Session]>) {
      sockets[name] = openEventSocket(w.e.stack.url, s.token);
      await sockets[name].opened;
    }
    try {
      const R = w.restricted.project.id;
      const shot = await create(w.admin.api, 'Shot', { project_id: R, data: { code: 'ws-live' } });
      expectStatus(await w.member.api.patch(`/entities/Shot/${shot.id}`, { data: { description: 'live' } }), 200);
      const note = await create(w.member.api, 'Note', { project_id: R, data: { subject: 'live', links: [{ type: 'Shot', id: shot.id }] } });
      expectStatus(await w.admin.api.post('/farm/jobs', { project_id: R, name: 'ws-live', kind: 'render', pool: 'ws-live' }), 200);
      const barrier = await barrierShot(w, 'ws-live');

      const isBarrier = (ev: any) => ev.entity_id === barrier.id;
      await socketSaw(sockets.outsider!, isBarrier, 'outsider: the barrier');
      expect(sockets.outsider!.messages.filter((ev) => isHiddenEvent(w, ev))).toEqual([]);
      expect(ascending(sockets.outsider!.messages)).toBe(true);
      for (const name of ['member', 'admin']) {
        await socketSaw(sockets[name]!, isBarrier, `${name}: the barrier`);
        const got = sockets[name]!.messages;
        expect(got.filter((ev) => ev.entity_id === shot.id).map((ev) => ev.action)).toEqual(['create', 'update']);
        expect(got.some((ev) => ev.entity_id === note.id)).toBe(true);
        expect(got.some((ev) => ev.entity_type === 'FarmJob' && ev.project_id === R)).toBe(true);
      }
    } finally {
      for (const socket of Object.values(sockets)) await socket.close();
    }
  });

  it('a since= replay leaves the restricted project out for a non-member, then goes on live', async () => {
    const barrier = await barrierShot(w, 'ws-since');
    await eventually(async () => ((await eventsAfter(w.admin.api, 0)).some((ev) => ev.entity_id === barrier.id) ? true : undefined), 20_000, 'barrier logged');
    const outsider = openEventSocket(w.e.stack.url, w.outsider.token, 0);
    const member = openEventSocket(w.e.stack.url, w.member.token, 0);
    try {
      await Promise.all([outsider.opened, member.opened]);
      for (const [name, socket] of [
        ['outsider', outsider],
        ['member', member],
      ] as Array<[string, EventSocket]>) {
        await socketSaw(socket, (ev) => ev.entity_id === barrier.id, `${name}: the barrier in the replay`, 30_000);
      }
      expect(outsider.messages.filter((ev) => isHiddenEvent(w, ev))).toEqual([]);
      expect(outsider.messages.some((ev) => ev.entity_id === w.open.shot.id && ev.action === 'create')).toBe(true);
      expect(ascending(outsider.messages)).toBe(true);
      // The replay is the outsider's GET /events?after=0, exactly.
      const upTo = outsider.messages.findIndex((ev) => ev.entity_id === barrier.id);
      const logged = (await eventsAfter(w.outsider.api, 0)).filter((ev) => ev.id <= outsider.messages[upTo].id);
      expect(outsider.messages.slice(0, upTo + 1)).toEqual(logged);
      expect(sawCreates(member.messages)).toBe(true);

      // Then live: a hidden write and an open one.
      const hidden = await create(w.admin.api, 'Shot', { project_id: w.restricted.project.id, data: { code: 'ws-since-live' } });
      const next = await barrierShot(w, 'ws-since-live');
      await socketSaw(outsider, (ev) => ev.entity_id === next.id, 'outsider: the live barrier');
      await socketSaw(member, (ev) => ev.entity_id === hidden.id, 'member: the live hidden Shot');
      expect(outsider.messages.some((ev) => ev.entity_id === hidden.id || isHiddenEvent(w, ev))).toBe(false);
      expect(ascending(outsider.messages)).toBe(true);
    } finally {
      await outsider.close();
      await member.close();
    }
  });

  it("GET /sync/changes leaves the restricted project's records out", async () => {
    const barrier = await barrierShot(w, 'sync');
    const R = w.restricted.project.id;
    const hiddenItem = (it: any) => w.hiddenIds.has(it.id) || it.record?.project_id === R || it.id === R;
    const outsider = await eventually(
      async () => {
        const items = await changesAfter(w.outsider.api);
        return items.some((it) => it.id === barrier.id) ? items : undefined;
      },
      20_000,
      'the barrier in the outsider’s changes',
    );
    expect(outsider.filter(hiddenItem)).toEqual([]);
    expect(outsider.some((it) => it.id === w.open.shot.id)).toBe(true);
    expect(outsider.some((it) => it.id === w.crossShot.id)).toBe(true);
    const member = await changesAfter(w.member.api);
    for (const r of [w.restricted.project, w.restricted.shot, w.restricted.task, w.crossNote]) expect(member.some((it) => it.id === r.id)).toBe(true);
    expect(await changesAfter(w.outsider.api, `&project_id=${R}`)).toEqual([]);
    const memberProject = await changesAfter(w.member.api, `&project_id=${R}`);
    expect(memberProject.some((it) => it.id === w.restricted.shot.id)).toBe(true);
  });

  /**
   * The outsider follows the WebSocket while `access` gives them `project`; once `revoke` ran, the
   * project's events stop reaching the socket within 2 s while the open project's keep coming, on
   * the same socket, which is never closed.
   */
  async function revokedWithin2s(project: any, revoke: () => Promise<void>): Promise<void> {
    const shot = await create(w.admin.api, 'Shot', { project_id: project.id, data: { code: `${project.data.code}-sh010` } });
    const openShot = await create(w.admin.api, 'Shot', { project_id: w.open.project.id, data: { code: `${project.data.code}-open` } });
    const socket = openEventSocket(w.e.stack.url, w.outsider.token);
    let closedAt = 0;
    void socket.closed.then(() => (closedAt = Date.now()));
    await socket.opened;
    try {
      const touch = async (id: string, description: string) =>
        expectStatus(await w.admin.api.patch(`/entities/Shot/${id}`, { data: { description } }), 200, `PATCH ${description}`);
      const saw = (id: string, description: string) => (ev: any) => ev.entity_id === id && ev.changes?.description === description;

      await touch(shot.id, 'while a reader');
      await socketSaw(socket, saw(shot.id, 'while a reader'), 'the project’s event while a reader');
      await touch(openShot.id, 'while a reader');
      await socketSaw(socket, saw(openShot.id, 'while a reader'), 'the open event while a reader');

      await revoke();
      const revokedAt = Date.now();
      expectHidden(await w.outsider.api.get(`/entities/Shot/${shot.id}`), 'the next request after the revocation');
      await sleep(Math.max(0, revokedAt + 2000 - Date.now()));
      const mark = socket.messages.length;
      for (let i = 0; i < 3; i++) {
        await touch(shot.id, `after ${i}`);
        await touch(openShot.id, `after ${i}`);
      }
      await socketSaw(socket, saw(openShot.id, 'after 2'), 'the open project’s last event after the revocation');
      await sleep(500);
      const later = socket.messages.slice(mark);
      expect(later.filter((ev) => ev.project_id === project.id || ev.entity_id === shot.id)).toEqual([]);
      expect(later.filter((ev) => ev.entity_id === openShot.id).map((ev) => ev.changes.description)).toEqual(['after 0', 'after 1', 'after 2']);
      expect(closedAt).toBe(0);
      expect(socket.ws.readyState).toBe(WebSocket.OPEN);
      // The Admin still reads the project's events.
      const logged = await eventsAfter(w.admin.api, 0, `&project_id=${project.id}`);
      expect(logged.filter((ev) => ev.entity_id === shot.id && String(ev.changes?.description).startsWith('after '))).toHaveLength(3);
    } finally {
      await socket.close();
    }
  }

  it("removing a member stops the project's events on their live WebSocket within 2 s, without closing it", async () => {
    const project = await create(w.admin.api, 'Project', {
      data: { name: 'Revoke', code: 'revoke', restricted: true, members: [userLink(w.outsider), userLink(w.member)] },
    });
    await revokedWithin2s(project, async () => {
      expectStatus(await w.admin.api.patch(`/entities/Project/${project.id}`, { data: { members: [userLink(w.member)] } }), 200, 'remove the outsider');
    });
  });

  it("making an open project restricted stops its events on a non-member's live WebSocket within 2 s, without closing it", async () => {
    const project = await create(w.admin.api, 'Project', { data: { name: 'Closing', code: 'closing' } });
    await revokedWithin2s(project, async () => {
      expectStatus(await w.admin.api.patch(`/entities/Project/${project.id}`, { data: { restricted: true, members: [userLink(w.member)] } }), 200, 'restrict');
    });
  });
});
