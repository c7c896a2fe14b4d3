import { describe, expect, it } from 'vitest';
import type { ContractEvent } from '@reelbase/lib-platform';
import { noteAfter, noteWriter, notificationsFor, taskAfter, type TaskState } from './rules.js';

const U = (n: number) => `0190a5a0-0000-7000-8000-${String(n).padStart(12, '0')}`;
const user = (n: number) => ({ type: 'User', id: U(n) });
let seq = 0;
const ev = (over: Partial<ContractEvent>): ContractEvent => ({
  id: ++seq,
  entity_type: 'Task',
  entity_id: U(100),
  project_id: null,
  action: 'create',
  actor: U(1),
  changes: {},
  created_at: '2026-01-01T00:00:00.000000Z',
  ...over,
});
const none = { taskBefore: null, taskAfter: null, linkedTasks: [], repliedAuthor: null };

describe('notification rules', () => {
  it('assigned: only users the task gains, never the actor', () => {
    const create = ev({ changes: { name: 't', assignees: [user(1), user(2)], entity: { type: 'Shot', id: U(500) } } });
    const t1 = taskAfter(create, null);
    expect(t1).toEqual({ taskId: U(100), entityId: U(500), assignees: [U(1), U(2)], retired: false });
    expect(notificationsFor(create, { ...none, taskAfter: t1 }).map((n) => [n.userId, n.kind])).toEqual([[U(2), 'assigned']]);

    const update = ev({ action: 'update', actor: U(9), changes: { assignees: [user(2), user(3)] } });
    const t2 = taskAfter(update, t1);
    expect(notificationsFor(update, { ...none, taskBefore: t1, taskAfter: t2 }).map((n) => n.userId)).toEqual([U(3)]);

    const other = ev({ action: 'update', actor: U(9), changes: { status: 'ip' } });
    expect(notificationsFor(other, { ...none, taskBefore: t2, taskAfter: taskAfter(other, t2) })).toEqual([]);
  });

  it('note: assignees of a linked task or of a task on a linked record; reply: the replied author', () => {
    const task: TaskState = { taskId: U(100), entityId: U(500), assignees: [U(2), U(3)], retired: false };
    const retired: TaskState = { taskId: U(101), entityId: U(500), assignees: [U(4)], retired: true };
    const onShot = ev({ entity_type: 'Note', entity_id: U(700), actor: U(3), changes: { links: [{ type: 'Shot', id: U(500) }] } });
    const got = notificationsFor(onShot, { ...none, linkedTasks: [task, retired] });
    expect(got).toEqual([{ userId: U(2), kind: 'note', recordType: 'Note', recordId: U(700) }]);

    const guestReply = ev({
      entity_type: 'Note',
      entity_id: U(701),
      actor: null,
      changes: { links: [], reply_to: { type: 'Note', id: U(700) }, guest_name: 'Client' },
    });
    expect(notificationsFor(guestReply, { ...none, repliedAuthor: U(3) }).map((n) => [n.userId, n.kind])).toEqual([[U(3), 'reply']]);

    const ownReply = ev({ entity_type: 'Note', entity_id: U(702), actor: U(3), changes: { reply_to: { type: 'Note', id: U(700) } } });
    expect(notificationsFor(ownReply, { ...none, repliedAuthor: U(3) })).toEqual([]);

    const unrelated = ev({ entity_type: 'Note', entity_id: U(703), changes: { links: [{ type: 'Shot', id: U(999) }] } });
    expect(notificationsFor(unrelated, { ...none, linkedTasks: [task] })).toEqual([]);
  });

  it('reply: the author of the note replied to when set, else the user who created it; a guest note has neither', () => {
    const created = ev({ entity_type: 'Note', entity_id: U(710), actor: U(2), changes: { content: 'v3?', links: [] } });
    const note = noteAfter(created, null);
    expect(note).toEqual({ author: null, creator: U(2) });
    const reply = ev({ entity_type: 'Note', entity_id: U(711), actor: U(5), changes: { reply_to: { type: 'Note', id: U(710) } } });
    expect(notificationsFor(reply, { ...none, repliedAuthor: noteWriter(note) }).map((n) => [n.userId, n.kind])).toEqual([[U(2), 'reply']]);

    // data.author wins over the creator, at the create or set later; cleared, the creator is told again.
    const byAuthor = noteAfter(ev({ entity_type: 'Note', entity_id: U(712), actor: U(2), changes: { author: user(3) } }), null);
    expect(byAuthor).toEqual({ author: U(3), creator: U(2) });
    expect(noteWriter(byAuthor)).toBe(U(3));
    const setLater = noteAfter(ev({ entity_type: 'Note', entity_id: U(710), action: 'update', actor: U(9), changes: { author: user(4) } }), note);
    expect(noteWriter(setLater)).toBe(U(4));
    const cleared = noteAfter(ev({ entity_type: 'Note', entity_id: U(710), action: 'update', actor: U(9), changes: { author: null } }), setLater);
    expect(cleared).toEqual({ author: null, creator: U(2) });
    expect(noteWriter(cleared)).toBe(U(2));
    // Changes that leave the author alone, and deletes, change nothing remembered.
    expect(noteAfter(ev({ entity_type: 'Note', entity_id: U(710), action: 'update', changes: { content: 'x' } }), note)).toBeNull();
    expect(noteAfter(ev({ entity_type: 'Note', entity_id: U(710), action: 'delete', changes: {} }), note)).toBeNull();

    // A guest's note without author: no writer to tell. A revive keeps the first creator (its actor is not the creator).
    const guest = noteAfter(ev({ entity_type: 'Note', entity_id: U(713), actor: null, changes: { content: 'nice', guest_name: 'Client' } }), null);
    expect(guest).toEqual({ author: null, creator: null });
    expect(noteWriter(guest)).toBeNull();
    expect(notificationsFor(ev({ ...reply, changes: { reply_to: { type: 'Note', id: U(713) } } }), { ...none, repliedAuthor: noteWriter(guest) })).toEqual([]);
    const revived = ev({ entity_type: 'Note', entity_id: U(710), actor: U(9), changes: { content: 'v3?', revived: true } });
    expect(noteAfter(revived, null)).toEqual({ author: null, creator: null });
    expect(noteAfter(revived, note)).toBeNull();
    expect(noteWriter(undefined)).toBeNull();
  });
});
