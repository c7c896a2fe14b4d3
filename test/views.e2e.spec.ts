/**
 * The work views against the whole stack, every record written through the API and checked
 * against the schema: a record's notes, a user's tasks and timesheet, and who may read the
 * last two (the user, Admin, Supervisor, Coordinator; Artist and Viewer reading another user 403).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

describe('work views (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let other: Session;
  let viewer: Session;
  let supervisor: Session;
  let coordinator: Session;
  let projectId: string;
  let shot: any;
  const tasks: any[] = [];
  const ids = (body: any) => (body.items as any[]).map((r) => r.id);
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const link = (r: any) => ({ type: r.entity_type, id: r.id });

  beforeAll(async () => {
    e = await startE2EStack('views');
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    other = await createUser(admin.api, 'Artist', 'bo@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    supervisor = await createUser(admin.api, 'Supervisor', 'sue@studio.test');
    coordinator = await createUser(admin.api, 'Coordinator', 'cora@studio.test');
    projectId = (await create(admin.api, 'Project', { data: { name: 'Views', code: 'views' } })).id;
    shot = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh010' } });
    const user = (s: Session) => ({ type: 'User', id: s.user.id });
    tasks.push(await create(supervisor.api, 'Task', { project_id: projectId, data: { name: 'Comp', entity: link(shot), assignees: [user(artist)] } }));
    tasks.push(
      await create(supervisor.api, 'Task', { project_id: projectId, data: { name: 'Roto', entity: link(shot), assignees: [user(other), user(artist)] } }),
    );
    tasks.push(await create(supervisor.api, 'Task', { project_id: projectId, data: { name: 'Paint', entity: link(shot), assignees: [user(other)] } }));
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  it("a record's notes: oldest first, any role, retired notes left out; 404 for a missing or retired record", async () => {
    const other2 = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh020' } });
    const n1 = await create(artist.api, 'Note', {
      project_id: projectId,
      data: { subject: 'first', content: 'edge', links: [link(shot)], author: { type: 'User', id: artist.user.id } },
    });
    const n2 = await create(viewer.api, 'Note', { project_id: projectId, data: { subject: 'second', links: [link(other2), link(shot)] } });
    const gone = await create(artist.api, 'Note', { project_id: projectId, data: { subject: 'gone', links: [link(shot)] } });
    expectStatus(await artist.api.delete(`/entities/Note/${gone.id}`), 200, 'retire note');
    await create(artist.api, 'Note', { project_id: projectId, data: { subject: 'elsewhere', links: [link(other2)] } });

    for (const s of [viewer, artist, admin]) {
      const notes = expectStatus(await s.api.get(`/entities/Shot/${shot.id}/notes`), 200, 'notes');
      expect(ids(notes)).toEqual([n1.id, n2.id]);
      expect(notes.items[0]).toEqual(n1);
    }
    expectError(await viewer.api.get(`/entities/Asset/${shot.id}/notes`), 404, 'not_found');
    expectError(await viewer.api.get('/entities/Shot/0190a0b0-0000-7000-8000-0000000000ff/notes'), 404, 'not_found');
    expectValidation(await viewer.api.get('/entities/Shot/nope/notes'), ['path', 'record_id']);
    expectError(await e.api.get(`/entities/Shot/${shot.id}/notes`), 401, 'unauthenticated');
    expectStatus(await admin.api.delete(`/entities/Shot/${other2.id}`), 200, 'retire shot');
    expectError(await viewer.api.get(`/entities/Shot/${other2.id}/notes`), 404, 'not_found');
  });

  it("a user's tasks: the user, Admin, Supervisor and Coordinator; an Artist or Viewer reading another user 403", async () => {
    for (const s of [artist, admin, supervisor, coordinator]) {
      const res = expectStatus(await s.api.get(`/users/${artist.user.id}/tasks`), 200, 'tasks');
      expect(ids(res)).toEqual([tasks[0].id, tasks[1].id]);
    }
    expect(ids(expectStatus(await other.api.get(`/users/${other.user.id}/tasks`), 200))).toEqual([tasks[1].id, tasks[2].id]);
    expect(ids(expectStatus(await viewer.api.get(`/users/${viewer.user.id}/tasks`), 200))).toEqual([]);
    expectError(await other.api.get(`/users/${artist.user.id}/tasks`), 403, 'forbidden');
    expectError(await viewer.api.get(`/users/${artist.user.id}/tasks`), 403, 'forbidden');
    expectError(await admin.api.get('/users/0190a0b0-0000-7000-8000-0000000000ff/tasks'), 404, 'not_found');
    expectError(await e.api.get(`/users/${artist.user.id}/tasks`), 401, 'unauthenticated');
  });

  it("a user's timesheet: own time logged through the API, inclusive dates, total_minutes, and the order 401 → 403 → 422 → 404", async () => {
    const log = (s: Session, user: Session, date: string, minutes: number) =>
      create(s.api, 'TimeLog', { project_id: projectId, data: { user: { type: 'User', id: user.user.id }, task: link(tasks[0]), date, minutes } });
    const march1 = await log(artist, artist, '2026-03-01', 90);
    const march31 = await log(artist, artist, '2026-03-31', 30);
    await log(artist, artist, '2026-04-01', 480);
    await log(coordinator, other, '2026-03-15', 240);
    const retired = await log(artist, artist, '2026-03-10', 1000);
    expectStatus(await artist.api.delete(`/entities/TimeLog/${retired.id}`), 200, 'retire time log');

    const march = `/users/${artist.user.id}/timesheet?from=2026-03-01&to=2026-03-31`;
    for (const s of [artist, admin, supervisor, coordinator]) {
      const sheet = expectStatus(await s.api.get(march), 200, 'timesheet');
      expect(ids(sheet)).toEqual([march1.id, march31.id]);
      expect(sheet.total_minutes).toBe(120);
    }
    const other3 = expectStatus(await other.api.get(`/users/${other.user.id}/timesheet?from=2026-03-15&to=2026-03-15`), 200);
    expect([ids(other3).length, other3.total_minutes]).toEqual([1, 240]);

    expectError(await e.api.get(`/users/${artist.user.id}/timesheet?from=bad`), 401, 'unauthenticated');
    expectError(await other.api.get(march), 403, 'forbidden');
    expectError(await viewer.api.get(`/users/${artist.user.id}/timesheet?from=bad`), 403, 'forbidden');
    expectValidation(await artist.api.get(`/users/${artist.user.id}/timesheet?from=2026-3-1&to=2026-03-31`), ['query', 'from']);
    expectValidation(await artist.api.get(`/users/${artist.user.id}/timesheet?from=2026-03-01`), ['query', 'to']);
    expectValidation(await artist.api.get(`/users/${artist.user.id}/timesheet?from=2026-04-01&to=2026-03-01`), ['query', 'from']);
    const missing = '/users/0190a0b0-0000-7000-8000-0000000000ff/timesheet';
    expectValidation(await admin.api.get(`${missing}?from=2026-02-30&to=2026-03-01`), ['query', 'from']);
    expectError(await admin.api.get(`${missing}?from=2026-03-01&to=2026-03-31`), 404, 'not_found');
  });
});
