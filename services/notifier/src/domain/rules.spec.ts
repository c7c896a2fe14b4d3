import { describe, expect, it } from 'vitest';
import type { ContractEvent } from '@reelbase/lib-platform';
import { notificationsFor, taskAfter, type TaskState } from './rules.js';

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
});
