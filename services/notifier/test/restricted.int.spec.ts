/**
 * Notifications about a restricted project the caller may not read (docs/api-notes.md,
 * "Restricted projects"): the gateway names the hidden projects on each call; the notifier leaves
 * their notifications out of the list, answers 404 to reading one, and leaves them unread on
 * read-all. Notifications written before they kept their project are left out for a caller with a
 * hidden project until the notifier has looked their events up in the log, which it does at start.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appErrorOf } from '@reelbase/lib-testkit';
import { as, link, settledIn, sql, waitFor, world, type World } from './helpers.js';

let w: World;
const [admin, ana] = [randomUUID(), randomUUID()];
const [secret, open] = [randomUUID(), randomUUID()];
const [secretTask, openTask, studioTask] = [randomUUID(), randomUUID(), randomUUID()];

const list = async (hidden: string[], unreadOnly = false) =>
  (await w.client.listNotifications({ unreadOnly, limit: 50, hiddenProjectIds: hidden }, as(ana))).items.map((n) => n.recordId);

const settled = () => settledIn(w);

beforeAll(async () => {
  w = await world();
  await w.start();
  // The follower has fixed where it starts (the log's end, here empty): what follows notifies.
  await settled();
  // Ana is assigned a task in each project, and one of no project.
  for (const [task, project] of [
    [secretTask, secret],
    [openTask, open],
    [studioTask, null],
  ] as const) {
    w.log.append({ entity_type: 'Task', entity_id: task, project_id: project, actor: admin, changes: { name: 't', assignees: [link('User', ana)] } });
  }
  await settled();
});

afterAll(async () => {
  await w?.close();
});

describe('notifications of restricted projects', () => {
  it('keeps each notification’s project and leaves the hidden ones out of the list', async () => {
    expect(await list([])).toEqual([studioTask, openTask, secretTask]);
    expect(await list([secret])).toEqual([studioTask, openTask]);
    expect(await list([secret.toUpperCase(), open])).toEqual([studioTask]);
  });

  it('answers 404 to reading a hidden one, and read-all leaves it unread', async () => {
    const hiddenOne = (await w.client.listNotifications({ unreadOnly: false, limit: 50, hiddenProjectIds: [] }, as(ana))).items.find(
      (n) => n.recordId === secretTask,
    )!;
    const refused = await appErrorOf(w.client.markNotificationRead({ id: hiddenOne.id, hiddenProjectIds: [secret] }, as(ana)));
    expect(refused.kind).toBe('not_found');
    expect((await w.client.markAllNotificationsRead({ hiddenProjectIds: [secret] }, as(ana))).count).toBe(2);
    // Once readable again, it is still unread.
    expect(await list([], true)).toEqual([secretTask]);
  });

  it('refuses a hidden project id that is no UUID', async () => {
    const err = await appErrorOf(w.client.listNotifications({ unreadOnly: false, limit: 5, hiddenProjectIds: ['nope'] }, as(ana)));
    expect(err.kind).toBe('invalid');
    expect(err.problems[0]?.loc).toEqual(['hidden_project_ids', 0]);
  });

  it('hides notifications of an unknown project from callers with a hidden project until the log is read for them at start', async () => {
    // As the migration leaves the notifications written before it.
    await sql(w, 'update notifier.notification set project_id = null, project_known = false');
    expect(await list([])).toEqual([studioTask, openTask, secretTask]);
    expect(await list([secret])).toEqual([]);
    w.client.close();
    await w.notifier!.stop();
    await w.start();
    await waitFor(async () => (await list([secret])).length === 2, 10_000, 'the projects looked up');
    expect(await list([secret])).toEqual([studioTask, openTask]);
    expect(await sql(w, 'select count(*)::int as n from notifier.notification where not project_known')).toEqual([{ n: 0 }]);
  });
});
