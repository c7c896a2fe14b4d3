/**
 * Restricted projects and the per-user views and project-scoped routes, against the whole stack
 * (docs/api-notes.md, "Restricted projects", "Work views", "Notifications", "Actions", "Share
 * links", "Media and reviewables"): a user's tasks and timesheet hold only what the caller may
 * read (whoever's list it is); notifications about a project the user may not read are never
 * shown to them; actions are neither listed nor executed on its records (404); share links of its
 * playlists are not made, listed or revoked by non-members (404 after the role's 403), while a
 * guest of a live link still sees the playlist; its Versions' reviewables are neither read nor
 * uploaded (404).
 */
import { describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import type { Session } from './support/e2e.stack.js';
import { expectError } from './support/expect.helpers.js';
import { create, expectHidden, idsOf, SHEET_RANGE, useRestrictedWorld, userLink, type RestrictedWorld } from './support/restricted.fixture.js';

/** A 1×1 PNG: enough for an upload to be accepted (the transcode's outcome does not matter here). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

describe('restricted projects: views, notifications, actions, share links, reviewables (whole stack)', () => {
  let w: RestrictedWorld;
  useRestrictedWorld('restricted-views', (world) => (w = world));

  const tasksOf = async (caller: Session, of: Session) => idsOf(expectStatus(await caller.api.get(`/users/${of.user.id}/tasks`), 200, 'tasks').items);
  const sheetOf = async (caller: Session, of: Session) => expectStatus(await caller.api.get(`/users/${of.user.id}/timesheet?${SHEET_RANGE}`), 200, 'timesheet');
  const notifications = async (s: Session) => expectStatus(await s.api.get('/notifications?limit=200'), 200, 'GET /notifications').items as any[];

  it("/users/{id}/tasks holds only the tasks of projects the caller may read, whoever's list it is", async () => {
    // Both Artists are assigned the Task of each project.
    const own = await tasksOf(w.outsider, w.outsider);
    expect(own).toContain(w.open.task.id);
    expect(own).not.toContain(w.restricted.task.id);
    expect(await tasksOf(w.member, w.member)).toEqual(expect.arrayContaining([w.open.task.id, w.restricted.task.id]));
    // Another user's list, read by a Coordinator: what the reader may read decides.
    const byOutsiderCoord = await tasksOf(w.coordOutsider, w.member);
    expect(byOutsiderCoord).toContain(w.open.task.id);
    expect(byOutsiderCoord).not.toContain(w.restricted.task.id);
    expect(await tasksOf(w.coordMember, w.outsider)).toEqual(expect.arrayContaining([w.open.task.id, w.restricted.task.id]));
    expect(await tasksOf(w.admin, w.outsider)).toEqual(expect.arrayContaining([w.open.task.id, w.restricted.task.id]));
    // The role rule is unchanged: an Artist reading another user's list is 403.
    expectError(await w.outsider.api.get(`/users/${w.member.user.id}/tasks`), 403, 'forbidden');
  });

  it('timesheets leave out TimeLogs in projects the caller may not read, from the items and the total', async () => {
    // The outsider's time: 30 minutes in the open project (logged themself), 60 in the restricted one (by the Admin).
    const own = await sheetOf(w.outsider, w.outsider);
    expect({ ids: idsOf(own.items), total: own.total_minutes }).toEqual({ ids: [w.open.timeLog.id], total: 30 });
    const byCoordOutsider = await sheetOf(w.coordOutsider, w.outsider);
    expect({ ids: idsOf(byCoordOutsider.items), total: byCoordOutsider.total_minutes }).toEqual({ ids: [w.open.timeLog.id], total: 30 });
    for (const s of [w.admin, w.coordMember]) {
      const all = await sheetOf(s, w.outsider);
      expect({ ids: idsOf(all.items).sort(), total: all.total_minutes }).toEqual({ ids: [w.open.timeLog.id, w.restricted.timeLog.id].sort(), total: 90 });
    }
    // The outsider cannot change or retire the hidden TimeLog of their own time either.
    expectHidden(await w.outsider.api.patch(`/entities/TimeLog/${w.restricted.timeLog.id}`, { data: { minutes: 1 } }), 'PATCH own hidden TimeLog');
    expectHidden(await w.outsider.api.delete(`/entities/TimeLog/${w.restricted.timeLog.id}`), 'DELETE own hidden TimeLog');
  });

  it('notifications about the restricted project never reach a non-member; members get theirs', async () => {
    // The open project's Note is the world's last notifying write: once the outsider has it, every
    // earlier notification of theirs has been made (the notifier applies the log in order).
    await eventually(
      async () => ((await notifications(w.outsider)).some((n) => n.kind === 'note' && n.record.id === w.open.note.id) ? true : undefined),
      20_000,
      "the outsider's notification of the open Note",
    );
    const outsider = await notifications(w.outsider);
    expect(
      outsider.filter((n) => w.hiddenIds.has(n.record.id)),
      JSON.stringify(outsider),
    ).toEqual([]);
    expect(outsider.map((n) => `${n.kind} ${n.record.id}`)).toEqual(expect.arrayContaining([`assigned ${w.open.task.id}`, `note ${w.open.note.id}`]));

    // The member is told of the restricted Task, the restricted Note on its Shot, and the restricted Note on the open Shot.
    const member = await eventually(
      async () => {
        const items = await notifications(w.member);
        return items.some((n) => n.record.id === w.open.note.id) ? items : undefined;
      },
      20_000,
      "the member's notification of the open Note",
    );
    expect(member.map((n) => `${n.kind} ${n.record.id}`)).toEqual(
      expect.arrayContaining([`assigned ${w.restricted.task.id}`, `note ${w.restricted.note.id}`, `note ${w.crossNote.id}`]),
    );

    // A fresh assignment in the restricted project: the member is told, the outsider (assigned too) is not.
    const task = await create(w.admin.api, 'Task', {
      project_id: w.restricted.project.id,
      data: { name: 'late secret task', assignees: [userLink(w.outsider), userLink(w.member)] },
    });
    const openTask = await create(w.admin.api, 'Task', {
      project_id: w.open.project.id,
      data: { name: 'late open task', assignees: [userLink(w.outsider)] },
    });
    await eventually(
      async () => ((await notifications(w.outsider)).some((n) => n.record.id === openTask.id) ? true : undefined),
      20_000,
      'the outsider notified of the later open Task',
    );
    expect((await notifications(w.outsider)).map((n) => n.record.id)).not.toContain(task.id);
    await eventually(async () => ((await notifications(w.member)).some((n) => n.record.id === task.id) ? true : undefined), 20_000, 'member notified');
  });

  it('actions are neither listed nor executed on records of the restricted project for a non-member (404)', async () => {
    expectStatus(
      await w.admin.api.call('PUT', '/schema/applications', {
        body: { applications: [{ code: 'nuke15', label: 'Nuke 15.1', group: 'nuke', version: '15.1' }] },
      }),
      200,
      'PUT /schema/applications',
    );
    const ctx = (project: string, ids: string[]) => ({ project_id: project, entity_type: 'Task', entity_ids: ids });
    const R = w.restricted.project.id;
    const O = w.open.project.id;
    const hiddenTask = [w.restricted.task.id];
    expectHidden(await w.outsider.api.post('/actions/list', ctx(R, hiddenTask)), 'list in the restricted project');
    // Naming the open project does not make the hidden Task exist.
    expectHidden(await w.outsider.api.post('/actions/list', ctx(O, hiddenTask)), 'list a hidden Task under the open project');
    expectHidden(await w.outsider.api.post('/actions/execute', { action_id: 'launch:nuke15', ...ctx(R, hiddenTask) }), 'execute');
    expectHidden(await w.coordOutsider.api.post('/actions/execute', { action_id: 'launch:nuke15', ...ctx(R, hiddenTask) }), 'execute (coordinator)');

    const listed = expectStatus(await w.outsider.api.post('/actions/list', ctx(O, [w.open.task.id])), 200, 'list in the open project');
    expect(listed.items.map((a: any) => a.id)).toEqual(['launch:nuke15']);
    for (const s of [w.member, w.admin]) {
      expect(expectStatus(await s.api.post('/actions/list', ctx(R, hiddenTask)), 200, 'member list').items.map((a: any) => a.id)).toEqual(['launch:nuke15']);
      const launched = expectStatus(await s.api.post('/actions/execute', { action_id: 'launch:nuke15', ...ctx(R, hiddenTask) }), 200, 'member execute');
      expect(launched.kind).toBe('launch');
      const payload = expectStatus(await s.api.get(`/actions/launch/${launched.token}`), 200, 'launch payload');
      expect(payload.context.project.id).toBe(R);
    }
  });

  it("share links of the restricted project's playlists: 404 for a non-member Coordinator, made by a member; a guest still sees the playlist", async () => {
    const path = `/playlists/${w.restricted.playlist.id}/share`;
    // The role decides first: Artists are refused whatever the playlist.
    expectError(await w.outsider.api.post(path, {}), 403, 'forbidden');
    expectError(await w.member.api.post(path, {}), 403, 'forbidden');
    expectHidden(await w.coordOutsider.api.post(path, {}), 'coordinator outsider shares');
    expectHidden(await w.coordOutsider.api.get(path), 'coordinator outsider lists links');

    const made = expectStatus(await w.coordMember.api.post(path, {}), 200, 'coordinator member shares');
    expect(made.playlist_id).toBe(w.restricted.playlist.id);
    expect(idsOf(expectStatus(await w.admin.api.get(path), 200).items)).toContain(made.id);
    // Revoking it is a write on the hidden playlist: 404 for the outsider, by id or by token; the link stays live.
    expectHidden(await w.coordOutsider.api.delete(`/share/${made.id}`), 'revoke by id');
    expectHidden(await w.coordOutsider.api.delete(`/share/${made.token}`), 'revoke by token');
    // Guests are not filtered: the link shows its playlist.
    const shared = expectStatus(await w.e.api.as(null).get(`/shared/${made.token}`), 200, 'guest GET /shared');
    expect(shared.playlist.id).toBe(w.restricted.playlist.id);
    expect(shared.versions.map((v: any) => v.id)).toEqual([w.restricted.version.id]);
    expect(expectStatus(await w.coordMember.api.delete(`/share/${made.id}`), 200, 'member revokes').revoked_at).toEqual(expect.any(String));
  });

  it("reviewables of the restricted project's Versions are neither uploaded nor read by a non-member (404)", async () => {
    const upload = (s: Session, versionId: string) =>
      s.api.call('POST', `/versions/${versionId}/reviewable`, { rawBody: PNG, headers: { 'content-type': 'image/png', 'x-file-name': 'frame.png' } });
    const path = `/versions/${w.restricted.version.id}/reviewable`;
    expectHidden(await upload(w.outsider, w.restricted.version.id), 'outsider upload');
    const up = expectStatus(await upload(w.member, w.restricted.version.id), 200, 'member upload');
    expect(up.status).toBe('pending');
    expect(up.representation.project_id).toBe(w.restricted.project.id);
    expectHidden(await w.outsider.api.get(path), 'outsider reviewable status');
    expectHidden(await w.coordOutsider.api.get(path), 'coordinator outsider reviewable status');
    for (const s of [w.member, w.admin]) expect(expectStatus(await s.api.get(path), 200, 'reviewable status').representation_id).toBe(up.representation.id);
    expectHidden(await w.outsider.api.get(`/entities/Representation/${up.representation.id}`), 'the upload’s Representation');
  });
});
