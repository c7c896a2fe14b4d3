/**
 * Restricted projects on the event streams, whole stack (docs/api-notes.md, "Restricted projects"):
 * `GET /events`, the WebSocket and notifications leave out a restricted project for whoever is not
 * its member; a member removed stops receiving its events within 2 s on the same socket while other
 * projects keep flowing, and a member added starts receiving them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { openEventSocket, type EventSocket } from './support/ws.client.js';

const member = (s: Session) => ({ type: 'User', id: s.user.id });

describe('restricted projects on the event streams (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let supervisor: Session;
  let secret: { id: string };
  let open: { id: string };

  beforeAll(async () => {
    e = await startE2EStack('restricted-streams');
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'artist@studio.test');
    supervisor = await createUser(admin.api, 'Supervisor', 'supervisor@studio.test');
  });
  afterAll(async () => {
    await e?.teardown();
  });

  /** Writes a Shot in `project` and one in the open project; once `socket` has the open one, whether it got the first. */
  async function sentBeside(socket: EventSocket, project: { id: string }, code: string): Promise<boolean> {
    const hidden = expectStatus(await admin.api.post('/entities/Shot', { project_id: project.id, data: { code: `${code}a` } }), 200);
    const shown = expectStatus(await admin.api.post('/entities/Shot', { project_id: open.id, data: { code: `${code}b` } }), 200);
    await eventually(async () => (socket.messages.some((m) => m.entity_id === shown.id) ? true : undefined), 10_000, `${code}b on the socket`);
    return socket.messages.some((m) => m.entity_id === hidden.id);
  }

  it('leaves a restricted project out of GET /events and the WebSocket for everyone but its members and Admins', async () => {
    const start = await lastEventId(admin.api);
    const artistSocket = openEventSocket(e.stack.url, artist.token);
    const supervisorSocket = openEventSocket(e.stack.url, supervisor.token);
    await Promise.all([artistSocket.opened, supervisorSocket.opened]);

    secret = expectStatus(
      await admin.api.post('/entities/Project', { data: { name: 'Secret', code: 'nda', restricted: true, members: [member(supervisor)] } }),
      200,
    );
    open = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Open', code: 'open' } }), 200);
    expect(await sentBeside(artistSocket, secret, 'sh1')).toBe(false);
    expect(await sentBeside(supervisorSocket, secret, 'sh2')).toBe(true);
    // Not even the Project's own create reached the artist.
    expect(artistSocket.messages.some((m) => m.entity_id === secret.id)).toBe(false);

    const seen = (s: Session) => eventsAfter(s.api, start).then((items) => new Set(items.map((ev) => ev.project_id)));
    expect((await seen(artist)).has(secret.id)).toBe(false);
    expect((await seen(artist)).has(open.id)).toBe(true);
    expect((await seen(supervisor)).has(secret.id)).toBe(true);
    expect((await seen(admin)).has(secret.id)).toBe(true);
    expect(expectStatus(await artist.api.get(`/events?project_id=${secret.id}`), 200)).toEqual({ items: [], next_cursor: null });
    await Promise.all([artistSocket.close(), supervisorSocket.close()]);
  });

  it('a member removed stops receiving at once on the same socket; a member added starts', async () => {
    const artistSocket = openEventSocket(e.stack.url, artist.token);
    const supervisorSocket = openEventSocket(e.stack.url, supervisor.token);
    await Promise.all([artistSocket.opened, supervisorSocket.opened]);
    expect(await sentBeside(supervisorSocket, secret, 'sh3')).toBe(true);

    // The gateway that relays the change reads who may read the project before it answers: the
    // very next event of the project already goes to the new member only.
    expectStatus(await admin.api.patch(`/entities/Project/${secret.id}`, { data: { members: [member(artist)] } }), 200);
    expect(await sentBeside(supervisorSocket, secret, 'sh4')).toBe(false);
    expect(await sentBeside(artistSocket, secret, 'sh5')).toBe(true);
    expect(supervisorSocket.ws.readyState).toBe(supervisorSocket.ws.OPEN);
    expect(artistSocket.ws.readyState).toBe(artistSocket.ws.OPEN);
    await Promise.all([artistSocket.close(), supervisorSocket.close()]);
  });

  it('notifications about a restricted project exist only for its readers', async () => {
    expectStatus(await admin.api.patch(`/entities/Project/${secret.id}`, { data: { members: [] } }), 200);
    const task = expectStatus(await admin.api.post('/entities/Task', { project_id: secret.id, data: { name: 'Comp', assignees: [member(artist)] } }), 200);
    // The notification is made: once the artist is a member it is theirs ...
    expectStatus(await admin.api.patch(`/entities/Project/${secret.id}`, { data: { members: [member(artist)] } }), 200);
    const told = await eventually(
      async () => {
        const items = expectStatus(await artist.api.get('/notifications'), 200).items as any[];
        return items.find((n) => n.record.id === task.id);
      },
      15_000,
      'the assigned notification',
    );
    // ... and leaves the artist's list, and cannot be read, as soon as they are no member again.
    expectStatus(await admin.api.patch(`/entities/Project/${secret.id}`, { data: { members: [] } }), 200);
    const items = expectStatus(await artist.api.get('/notifications'), 200).items as any[];
    expect(items.some((n) => n.record.id === task.id)).toBe(false);
    expect((await artist.api.post(`/notifications/${told.id}/read`)).status).toBe(404);
  });

  it('actions on a restricted project answer 404 to a non-member (records answers as the caller), and list for a member', async () => {
    expectStatus(await admin.api.patch(`/entities/Project/${secret.id}`, { data: { members: [member(supervisor)] } }), 200);
    const shot = expectStatus(await admin.api.post('/entities/Shot', { project_id: secret.id, data: { code: 'act010' } }), 200);
    const selection = { project_id: secret.id, entity_type: 'Shot', entity_ids: [shot.id] };
    expect((await artist.api.post('/actions/list', selection)).status).toBe(404);
    expect((await artist.api.post('/actions/execute', { ...selection, action_id: 'launch:nope' })).status).toBe(404);
    expectStatus(await supervisor.api.post('/actions/list', selection), 200);
    // Named beside a Shot of an open project, the hidden Shot is missing, not "of another project".
    const openShot = expectStatus(await admin.api.post('/entities/Shot', { project_id: open.id, data: { code: 'act020' } }), 200);
    const mixed = await artist.api.post('/actions/list', { project_id: open.id, entity_type: 'Shot', entity_ids: [openShot.id, shot.id] });
    expect(mixed.status).toBe(404);
  });
});
