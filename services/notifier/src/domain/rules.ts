/**
 * Who is notified of an event (docs/notifier.md, "Notification rules"), as pure functions of
 * the event and what the notifier remembers from earlier events (task assignees and entity,
 * note authors). Nobody is notified of their own action; a guest's write (actor null)
 * notifies like any other.
 *
 * - `assigned`: a Task create or update whose `assignees` gain the user (the record is the Task).
 * - `note`: a Note create whose `links` hold a Task the user is assigned to, or a record that
 *   is the `entity` of such a Task (a note on a Shot reaches the artists of the Shot's tasks).
 *   The record is the Note.
 * - `reply`: a Note create whose `reply_to` is a note the user wrote: its `author` when set,
 *   else the user who created it (a guest's note without `author` has no writer to tell). The
 *   record is the Note.
 */
import type { ContractEvent } from '@reelbase/lib-platform';

export const NOTIFICATION_KINDS = ['assigned', 'note', 'reply', 'webhook_disabled'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

/** A Task as the notifier remembers it. */
export interface TaskState {
  taskId: string;
  entityId: string | null;
  assignees: string[];
  retired: boolean;
}

/** One notification to write. */
export interface NotificationDraft {
  userId: string;
  kind: NotificationKind;
  recordType: string;
  recordId: string;
}

/** A link value `{"type","id"}` as records stores it. */
export interface LinkValue {
  type: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `v` as a link, or null. */
export function asLink(v: unknown): LinkValue | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const { type, id } = v as Record<string, unknown>;
  if (typeof type !== 'string' || typeof id !== 'string' || !UUID.test(id)) return null;
  return { type, id: id.toLowerCase() };
}

/** The links of a multi_link value (anything else is no link). */
export function asLinks(v: unknown): LinkValue[] {
  if (!Array.isArray(v)) return [];
  return v.map(asLink).filter((l): l is LinkValue => l !== null);
}

/** User ids of a multi_link User value, de-duplicated, in order. */
function userIds(v: unknown): string[] {
  return [
    ...new Set(
      asLinks(v)
        .filter((l) => l.type === 'User')
        .map((l) => l.id),
    ),
  ];
}

/**
 * The Task as remembered after `event` (a Task event), from what was remembered before it
 * (null when the Task is new to the notifier).
 */
export function taskAfter(event: ContractEvent, before: TaskState | null): TaskState {
  const base: TaskState = before ?? { taskId: event.entity_id, entityId: null, assignees: [], retired: false };
  if (event.action === 'delete') return { ...base, retired: true };
  const next: TaskState = { ...base, retired: false };
  if (Object.hasOwn(event.changes, 'assignees')) next.assignees = userIds(event.changes.assignees);
  if (Object.hasOwn(event.changes, 'entity')) next.entityId = asLink(event.changes.entity)?.id ?? null;
  return next;
}

/** The users a Task event newly assigns (its assignees after, minus before, minus the actor). */
export function newlyAssigned(event: ContractEvent, before: TaskState | null, after: TaskState): string[] {
  if (event.entity_type !== 'Task' || event.action === 'delete' || !Object.hasOwn(event.changes, 'assignees')) return [];
  const had = new Set(before && !before.retired ? before.assignees : []);
  return after.assignees.filter((u) => !had.has(u) && u !== event.actor);
}

/** The record ids a Note create links to (what `note` looks up tasks by). */
export function noteLinkIds(event: ContractEvent): string[] {
  if (event.entity_type !== 'Note' || event.action !== 'create') return [];
  return [...new Set(asLinks(event.changes.links).map((l) => l.id))];
}

/** The note a Note create replies to, or null. */
export function replyToId(event: ContractEvent): string | null {
  if (event.entity_type !== 'Note' || event.action !== 'create') return null;
  return asLink(event.changes.reply_to)?.id ?? null;
}

/** The author a Note event sets (undefined when it does not set one; null when it clears it). */
export function noteAuthor(event: ContractEvent): string | null | undefined {
  if (event.entity_type !== 'Note' || event.action === 'delete' || !Object.hasOwn(event.changes, 'author')) return undefined;
  const l = asLink(event.changes.author);
  return l && l.type === 'User' ? l.id : null;
}

/** A Note as the notifier remembers it. */
export interface NoteState {
  /** Its `data.author`, null when not set. */
  author: string | null;
  /** The user who created it (the actor of its create), null for a guest's note or when unknown. */
  creator: string | null;
}

/**
 * The Note as remembered after `event` (a Note event), from what was remembered before it (null
 * when the Note is new to the notifier); null when the event changes nothing remembered. The
 * creator is taken from the create that is new to the notifier and kept for good; a revive's
 * actor is not the creator, so it names none.
 */
export function noteAfter(event: ContractEvent, before: NoteState | null): NoteState | null {
  if (event.entity_type !== 'Note' || event.action === 'delete') return null;
  const author = noteAuthor(event);
  const isNew = event.action === 'create' && before === null;
  if (author === undefined && !isNew) return null;
  const created = event.action === 'create' && event.changes.revived !== true ? event.actor : null;
  return { author: author ?? null, creator: before ? before.creator : created };
}

/** Who wrote a remembered note (whom a reply to it tells): its author, else its creator. */
export function noteWriter(note: NoteState | null | undefined): string | null {
  return note ? (note.author ?? note.creator) : null;
}

/** What {@link notificationsFor} needs besides the event. */
export interface RuleInputs {
  /** The Task before the event (Task events). */
  taskBefore: TaskState | null;
  /** The Task after the event (Task events). */
  taskAfter: TaskState | null;
  /** Live Tasks whose id or entity is one of {@link noteLinkIds} (Note creates). */
  linkedTasks: TaskState[];
  /** Writer ({@link noteWriter}) of the note replied to (Note creates with reply_to), null when unknown or none. */
  repliedAuthor: string | null;
}

/** Every notification `event` produces, at most one per user and kind. */
export function notificationsFor(event: ContractEvent, inputs: RuleInputs): NotificationDraft[] {
  const out: NotificationDraft[] = [];
  const seen = new Set<string>();
  const add = (userId: string, kind: NotificationKind) => {
    if (userId === event.actor || seen.has(`${kind}:${userId}`)) return;
    seen.add(`${kind}:${userId}`);
    out.push({ userId, kind, recordType: event.entity_type, recordId: event.entity_id });
  };
  if (event.entity_type === 'Task' && inputs.taskAfter) {
    for (const u of newlyAssigned(event, inputs.taskBefore, inputs.taskAfter)) add(u, 'assigned');
  }
  if (event.entity_type === 'Note' && event.action === 'create') {
    const links = new Set(noteLinkIds(event));
    for (const t of inputs.linkedTasks) {
      if (t.retired) continue;
      if (!links.has(t.taskId) && !(t.entityId !== null && links.has(t.entityId))) continue;
      for (const u of t.assignees) add(u, 'note');
    }
    if (inputs.repliedAuthor) add(inputs.repliedAuthor, 'reply');
  }
  return out;
}
