/**
 * Notification rules end to end inside the notifier: events appended to the log become each
 * user's notifications (assigned, note, reply — to a note's author, else its creator), never for
 * the actor's own action, and a user sees, reads and pages only their own.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appErrorOf } from '@reelbase/lib-testkit';
import { as, link, settledIn, sql, world, type World } from './helpers.js';

let w: World;
const [admin, ana, ben, cara] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
const shot = randomUUID();
const task = randomUUID();

/** Every notification of `user`, newest first, paging through. */
async function all(user: string, unreadOnly = false) {
  const out = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await w.client.listNotifications({ unreadOnly, limit: 2, hiddenProjectIds: [], ...(cursor ? { cursor } : {}) }, as(user));
    out.push(...page.items);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

const settled = () => settledIn(w);

beforeAll(async () => {
  w = await world();
  // Before the notifier first starts: only teaches state (Ana is already on the task).
  w.log.append({ entity_type: 'User', entity_id: admin, actor: admin, changes: { name: 'Ada Admin', role: 'Admin' } });
  w.log.append({ entity_type: 'Task', entity_id: task, actor: admin, changes: { name: 'comp', entity: link('Shot', shot), assignees: [link('User', ana)] } });
  await w.start();
});

afterAll(async () => {
  await w?.close();
});

describe('notifications', () => {
  it('events already in the log when the notifier first starts notify nobody', async () => {
    await settled();
    expect(await all(ana)).toEqual([]);
  });

  it('assigned: a task gaining a user notifies that user, not the actor and not those already on it', async () => {
    const e = w.log.append({
      entity_type: 'Task',
      entity_id: task,
      action: 'update',
      actor: ben,
      changes: { assignees: [link('User', ana), link('User', ben), link('User', cara)] },
    });
    await settled();
    const cs = await all(cara);
    expect(cs).toHaveLength(1);
    expect(cs[0]).toMatchObject({ kind: 'assigned', recordType: 'Task', recordId: task, eventId: e.id, actor: ben });
    expect(cs[0]!.readAt).toBeUndefined();
    expect(await all(ben)).toEqual([]);
    expect(await all(ana)).toEqual([]);
  });

  it('note: a note on the task, or on the shot the task is for, notifies its assignees but not the author', async () => {
    const onTask = w.log.append({ entity_type: 'Note', actor: ana, changes: { content: 'done?', links: [link('Task', task)], author: link('User', ana) } });
    const onShot = w.log.append({
      entity_type: 'Note',
      actor: admin,
      changes: { content: 'client notes', links: [link('Shot', shot)], author: link('User', admin) },
    });
    w.log.append({ entity_type: 'Note', actor: admin, changes: { content: 'elsewhere', links: [link('Shot', randomUUID())] } });
    await settled();
    const notes = (u: string) => all(u).then((l) => l.filter((n) => n.kind === 'note').map((n) => n.eventId));
    expect(await notes(ben)).toEqual([onShot.id, onTask.id]);
    expect(await notes(cara)).toEqual([onShot.id, onTask.id]);
    expect(await notes(ana)).toEqual([onShot.id]);
    expect(await notes(admin)).toEqual([]);
  });

  it('reply: a reply (a guest one too) notifies the author of the note replied to, never the replier', async () => {
    const original = w.log.append({ entity_type: 'Note', actor: ben, changes: { content: 'v2 up', links: [], author: link('User', ben) } });
    const guest = w.log.append({
      entity_type: 'Note',
      actor: null,
      changes: { content: 'love it', reply_to: link('Note', original.entity_id), guest_name: 'Client' },
    });
    w.log.append({ entity_type: 'Note', actor: ben, changes: { content: 'me again', reply_to: link('Note', original.entity_id), author: link('User', ben) } });
    await settled();
    const replies = (await all(ben)).filter((n) => n.kind === 'reply');
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatchObject({ recordType: 'Note', recordId: guest.entity_id, eventId: guest.id });
    expect(replies[0]!.actor).toBeUndefined();
  });

  it('reply: a note without author tells the user who created it; a guest note without author tells nobody', async () => {
    const plain = w.log.append({ entity_type: 'Note', actor: cara, changes: { content: 'notes on v3', links: [] } });
    const guestNote = w.log.append({ entity_type: 'Note', actor: null, changes: { content: 'from the client', links: [], guest_name: 'Client' } });
    await settled();
    // Read back from what the notifier stored, in a later page than the notes.
    const reply = w.log.append({ entity_type: 'Note', actor: ana, changes: { content: 'fixed', reply_to: link('Note', plain.entity_id) } });
    w.log.append({ entity_type: 'Note', actor: ana, changes: { content: 'thanks', reply_to: link('Note', guestNote.entity_id) } });
    await settled();
    const replies = (await all(cara)).filter((n) => n.kind === 'reply');
    expect(replies.map((n) => n.eventId)).toEqual([reply.id]);
    expect(replies[0]).toMatchObject({ recordType: 'Note', recordId: reply.entity_id, actor: ana });
    expect(await sql(w, 'select author, creator from notifier.note_state where note_id = ?', [guestNote.entity_id])).toEqual([{ author: null, creator: null }]);
  });

  it('a user reads and marks only their own notifications; another user’s is not found', async () => {
    const [first, second] = await all(cara);
    const theirs = await appErrorOf(w.client.markNotificationRead({ id: first!.id, hiddenProjectIds: [] }, as(ben)));
    expect(theirs.kind).toBe('not_found');
    expect((await appErrorOf(w.client.markNotificationRead({ id: 'nope', hiddenProjectIds: [] }, as(cara)))).kind).toBe('not_found');
    const read = await w.client.markNotificationRead({ id: first!.id, hiddenProjectIds: [] }, as(cara));
    expect(read.notification?.readAt).toMatch(/Z$/);
    const unreadIds = (await all(cara, true)).map((n) => n.id);
    expect(unreadIds).toContain(second!.id);
    expect(unreadIds).not.toContain(first!.id);
    const unread = (await all(cara, true)).length;
    expect((await w.client.markAllNotificationsRead({ hiddenProjectIds: [] }, as(cara))).count).toBe(unread);
    expect(await all(cara, true)).toEqual([]);
    expect((await all(ben, true)).length).toBeGreaterThan(0);
  });

  it('checks the caller and the page arguments', async () => {
    expect((await appErrorOf(w.client.listNotifications({ unreadOnly: false, limit: 0, hiddenProjectIds: [] }, { requestId: 'r' }))).kind).toBe(
      'unauthenticated',
    );
    expect((await appErrorOf(w.client.listNotifications({ unreadOnly: false, limit: 500, hiddenProjectIds: [] }, as(ana)))).problems[0]?.loc).toEqual([
      'limit',
    ]);
    expect(
      (await appErrorOf(w.client.listNotifications({ unreadOnly: false, limit: 5, cursor: 'x', hiddenProjectIds: [] }, as(ana)))).problems[0]?.loc,
    ).toEqual(['cursor']);
  });

  it('applying the same events again writes nothing twice', async () => {
    const before = await all(cara);
    // Rewind the position, as after a crash between the writes and the commit.
    await w.notifier!.stop();
    await sql(w, 'update notifier.follow_state set last_event_id = 2');
    await w.start();
    await settled();
    expect((await all(cara)).map((n) => n.id)).toEqual(before.map((n) => n.id));
  });
});
