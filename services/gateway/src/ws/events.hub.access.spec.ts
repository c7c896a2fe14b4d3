/**
 * Restricted projects on the WebSocket (docs/api-notes.md, "Restricted projects"): a socket sends
 * only the events of projects its user may read, replayed and live; a member removed stops
 * receiving the project's events within 2 s without reconnecting while other projects keep
 * flowing, and a member added starts receiving them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { contractEventFromProto } from '@reelbase/lib-platform';
import type { eventsv1 } from '@reelbase/proto';
import { startTestGateway, storeProject, userLink, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import { until, wsClient, type WsClient } from '../../test/support/ws.js';

const P = '0190a0b0-0000-7000-8000-0000000000e1';
const Q = '0190a0b0-0000-7000-8000-0000000000e2';
const T = '2026-01-01T00:00:00.000000Z';

let gw: TestGateway;
const call = httpClient(() => gw.url);

const member = userLink;

/** Appends an event to the fake log and, unless `live` is false, announces it on the bus as the events service does. */
function append(entityType: string, entityId: string, projectId: string | undefined, changes: Record<string, unknown> = {}, live = true): number {
  const id = gw.state.events.length + 1;
  const e: eventsv1.Event = {
    id,
    entityType,
    entityId,
    projectId,
    action: 'update',
    actor: USERS.admin.id,
    changesJson: JSON.stringify(changes),
    createdAt: T,
  };
  gw.state.events.push(e);
  if (live) {
    const row = contractEventFromProto(e);
    gw.bus.emit('event', { row, text: JSON.stringify(row) });
  }
  return id;
}

/** A Project write as another gateway relayed it: records changes, then its event arrives on the bus. */
function projectWritten(id: string, changes: Record<string, unknown>): number {
  const r = gw.state.records.get(id)!;
  gw.state.records.set(id, { ...r, dataJson: JSON.stringify({ ...(JSON.parse(r.dataJson) as object), ...changes }) });
  return append('Project', id, id, changes);
}

type Client = WsClient;
const connect = (query: string) => wsClient(gw.url, query);

const settle = () => new Promise((r) => setTimeout(r, 60));

/** A socket of `token` (live from the log's end), open and registered. */
async function openSocket(token: string): Promise<Client> {
  const c = connect(`?token=${token}`);
  await c.opened;
  await settle();
  return c;
}

/** Appends an event of `project`, then one of Q; once `c` has Q's, whether it was sent `project`'s too. */
async function sentBeside(c: Client, project: string): Promise<boolean> {
  const p = append('Shot', project, project);
  const q = append('Shot', Q, Q);
  await until(() => c.messages.some((m) => m.id === q));
  return c.messages.some((m) => m.id === p);
}
const projectsOf = (c: Client) => c.messages.map((m) => m.project_id);
/** Ids of a socket's messages from `from` on. */
const idsFrom = (c: Client, from: number) => c.messages.map((m) => m.id).filter((id) => id >= from);

beforeAll(async () => {
  gw = await startTestGateway({}, (peers, state) => {
    // P is restricted to the supervisor; Q is open. Stored before start: the first read finds them.
    storeProject(state, P, { restricted: true, members: [member(USERS.supervisor.id)] });
    storeProject(state, Q, {});
    return peers;
  });
});
afterAll(async () => {
  await gw.stop();
});

describe('WS /events/ws and restricted projects', () => {
  it('replays and sends live only what the user may read; Admins and members get everything', async () => {
    append('Shot', P, P, {}, false);
    append('Shot', Q, Q, {}, false);
    append('User', USERS.artist.id, undefined, {}, false);
    const artist = connect('?token=artist-token&since=0');
    const key = connect('?token=svc_artist&since=0');
    const supervisor = connect('?token=supervisor-token&since=0');
    const admin = connect('?token=admin-token&since=0');
    await Promise.all([artist.opened, key.opened, supervisor.opened, admin.opened]);
    append('Shot', P, P);
    const last = append('Shot', Q, Q);
    await until(() => [artist, key, supervisor, admin].every((c) => c.messages.at(-1)?.id === last));
    expect(projectsOf(artist)).toEqual([Q, null, Q]);
    expect(projectsOf(key)).toEqual([Q, null, Q]);
    expect(projectsOf(supervisor)).toEqual([P, Q, null, P, Q]);
    expect(projectsOf(admin)).toEqual([P, Q, null, P, Q]);
    for (const c of [artist, key, supervisor, admin]) c.ws.close();
  });

  it('a member removed stops receiving the project within 2 s, without reconnecting, and others keep flowing', async () => {
    const supervisor = await openSocket('supervisor-token');
    const before = append('Shot', P, P);
    await until(() => supervisor.messages.some((m) => m.id === before));

    const revokedAt = Date.now();
    const revocation = projectWritten(P, { members: [] });
    const p = append('Shot', P, P);
    const q = append('Shot', Q, Q);
    await until(() => supervisor.messages.some((m) => m.id === q));
    expect(Date.now() - revokedAt).toBeLessThan(2000);
    // The Project event that removed them is the last of P they see.
    expect(idsFrom(supervisor, before)).toEqual([before, q]);
    expect(supervisor.messages.some((m) => m.id === revocation || m.id === p)).toBe(false);
    expect(supervisor.ws.readyState).toBe(WebSocket.OPEN);

    // The read that follows the event agrees (records says the same): still hidden.
    await settle();
    expect(await sentBeside(supervisor, P)).toBe(false);
    supervisor.ws.close();
  });

  it('a member added starts receiving the project on the same socket', async () => {
    const artist = await openSocket('artist-token');
    const hidden = append('Shot', P, P);
    projectWritten(P, { members: [member(USERS.artist.id)] });
    const shown = append('Shot', P, P);
    await until(() => artist.messages.some((m) => m.id === shown));
    expect(artist.messages.some((m) => m.id === hidden)).toBe(false);
    expect(artist.ws.readyState).toBe(WebSocket.OPEN);
    artist.ws.close();
  });

  it('a Project write relayed by this gateway re-hides the sockets before it is answered, with no event yet', async () => {
    projectWritten(P, { members: [member(USERS.artist.id)] });
    const artist = await openSocket('artist-token');
    const res = await call('PATCH', `/entities/Project/${P}`, { token: 'admin-token', body: { data: { members: [] } } });
    expect(res.status).toBe(200);
    // No Project event reached the bus: only the read after the write knows the artist left.
    expect(await sentBeside(artist, P)).toBe(false);
    artist.ws.close();
  });

  it('a project newly restricted is hidden from its own event on: the event that restricts it is never sent', async () => {
    const viewer = await openSocket('viewer-token');
    const open = append('Shot', Q, Q);
    const restricting = projectWritten(Q, { restricted: true });
    const after = append('Shot', Q, Q);
    const studio = append('User', USERS.viewer.id, undefined);
    await until(() => viewer.messages.some((m) => m.id === studio));
    expect(idsFrom(viewer, open)).toEqual([open, studio]);
    expect([restricting, after].some((id) => viewer.messages.some((m) => m.id === id))).toBe(false);
    projectWritten(Q, { restricted: false });
    viewer.ws.close();
  });
});

describe('WS /events/ws while who reads restricted projects is not known', () => {
  it('closes non-Admin sockets with 1013, keeps Admins, and lets them in again once records answers', async () => {
    const own = await startTestGateway({}, (peers, state) => {
      state.down.add('records');
      return peers;
    });
    try {
      const artist = `${own.url.replace('http', 'ws')}/events/ws?token=artist-token`;
      const refused = new WebSocket(artist);
      refused.on('error', () => {});
      const code = await new Promise<number>((r) => refused.on('close', (c) => r(c)));
      expect(code).toBe(1013);
      const res = await fetch(`${own.url}/events`, { headers: { authorization: 'Bearer artist-token' } });
      expect(res.status).toBe(503);
      const admin = await fetch(`${own.url}/events`, { headers: { authorization: 'Bearer admin-token' } });
      expect(admin.status).toBe(200);
      own.state.down.delete('records');
      // Read again within a second (the retry interval while unknown).
      let status = 0;
      const end = Date.now() + 3000;
      while (status !== 200 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await fetch(`${own.url}/events`, { headers: { authorization: 'Bearer artist-token' } })).status;
      }
      expect(status).toBe(200);
    } finally {
      await own.stop();
    }
  });

  it('closes non-Admin sockets with 1013 when a Project changed and records cannot say how', async () => {
    const artist = connect('?token=artist-token');
    const admin = connect('?token=admin-token');
    await Promise.all([artist.opened, admin.opened]);
    await settle();
    gw.state.down.add('records');
    try {
      append('Project', Q, Q, { name: 'renamed' });
      expect((await artist.closed).code).toBe(1013);
      const res = await call('GET', '/events', { token: 'artist-token' });
      expect(res.status).toBe(503);
      expect(admin.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      gw.state.down.delete('records');
      admin.ws.close();
    }
  });
});
