/**
 * SQL of the log follower: the follow position, the remembered tasks, notes, users and record
 * labels, and the rows one batch of events writes (notifications, event bodies, deliveries).
 * Every method runs on the transaction it is given; bulk writes are one `unnest` statement each.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type {
  ActiveWebhook,
  DeliveryRow,
  EventBodyRow,
  FollowState,
  IngestStore,
  IngestTx,
  NotificationRow,
  ProjectBackfillStore,
  UserState,
} from '../domain/ports.js';
import type { NoteState, TaskState } from '../domain/rules.js';

type Db = Knex | Knex.Transaction;
const b = (v: unknown[]) => v as unknown as Knex.RawBinding[];

export class IngestRepository implements IngestStore, ProjectBackfillStore {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  unknownProjectEvents(after: number, limit: number): Promise<number[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { event_id: string }[] }>(
        `select distinct event_id from notifier.notification where not project_known and event_id > ? order by event_id limit ?`,
        [after, limit],
      );
      return res.rows.map((r) => Number(r.event_id));
    });
  }

  setNotificationProjects(found: ReadonlyArray<{ eventId: number; projectId: string | null }>): Promise<number> {
    if (found.length === 0) return Promise.resolve(0);
    return guarded(async () => {
      const res = await this.db.raw<{ rowCount: number }>(
        `update notifier.notification n set project_id = f.project_id, project_known = true
           from unnest(?::bigint[], ?::uuid[]) f(event_id, project_id)
          where n.event_id = f.event_id and not n.project_known`,
        b([found.map((f) => f.eventId), found.map((f) => f.projectId)]),
      );
      return res.rowCount;
    });
  }

  transaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T> {
    return guarded(() =>
      this.orm.em
        .getConnection()
        .getKnex()
        .transaction((trx) => fn(new IngestSql(trx))),
    );
  }
}

/** The follower's statements on one transaction. */
export class IngestSql implements IngestTx {
  constructor(private readonly db: Db) {}

  /** The follow position, locked for this transaction (one follower applies a batch at a time). */
  async lockFollowState(): Promise<FollowState | null> {
    const res = await this.db.raw<{ rows: { last_event_id: string; live_from: string }[] }>(
      'select last_event_id, live_from from notifier.follow_state where singleton for update',
    );
    const r = res.rows[0];
    return r ? { lastEventId: Number(r.last_event_id), liveFrom: Number(r.live_from) } : null;
  }

  /** Creates the follow position at the first start (no-op when another replica did). */
  async initFollowState(liveFrom: number): Promise<void> {
    await this.db.raw('insert into notifier.follow_state (singleton, last_event_id, live_from) values (true, 0, ?) on conflict do nothing', [liveFrom]);
  }

  async setLastEventId(id: number): Promise<void> {
    await this.db.raw('update notifier.follow_state set last_event_id = ? where singleton', [id]);
  }

  /** Tasks whose id is in `ids` or whose entity is in `entityIds`. */
  async tasks(ids: string[], entityIds: string[]): Promise<TaskState[]> {
    if (ids.length === 0 && entityIds.length === 0) return [];
    const res = await this.db.raw<{ rows: { task_id: string; entity_id: string | null; assignees: string[]; retired: boolean }[] }>(
      `select task_id, entity_id, assignees, retired from notifier.task_state
        where task_id = any(?::uuid[]) or (entity_id = any(?::uuid[]) and not retired)`,
      b([ids, entityIds]),
    );
    return res.rows.map((r) => ({ taskId: r.task_id, entityId: r.entity_id, assignees: r.assignees, retired: r.retired }));
  }

  async upsertTasks(tasks: TaskState[]): Promise<void> {
    if (tasks.length === 0) return;
    await this.db.raw(
      `insert into notifier.task_state (task_id, entity_id, assignees, retired)
       select t.id, t.entity, coalesce((select array_agg(x::uuid) from jsonb_array_elements_text(t.assignees) x), '{}'), t.retired
         from unnest(?::uuid[], ?::uuid[], ?::jsonb[], ?::boolean[]) t(id, entity, assignees, retired)
       on conflict (task_id) do update set entity_id = excluded.entity_id, assignees = excluded.assignees, retired = excluded.retired`,
      b([tasks.map((t) => t.taskId), tasks.map((t) => t.entityId), tasks.map((t) => JSON.stringify(t.assignees)), tasks.map((t) => t.retired)]),
    );
  }

  /** What is remembered of the notes in `ids` (a note never seen is absent). */
  async notes(ids: string[]): Promise<Map<string, NoteState>> {
    if (ids.length === 0) return new Map();
    const res = await this.db.raw<{ rows: { note_id: string; author: string | null; creator: string | null }[] }>(
      'select note_id, author, creator from notifier.note_state where note_id = any(?::uuid[])',
      b([ids]),
    );
    return new Map(res.rows.map((r) => [r.note_id, { author: r.author, creator: r.creator }]));
  }

  /** Stores notes; a note's creator, once known, is kept. */
  async upsertNotes(notes: Map<string, NoteState>): Promise<void> {
    if (notes.size === 0) return;
    const rows = [...notes.values()];
    await this.db.raw(
      `insert into notifier.note_state (note_id, author, creator) select * from unnest(?::uuid[], ?::uuid[], ?::uuid[])
       on conflict (note_id) do update set author = excluded.author, creator = coalesce(note_state.creator, excluded.creator)`,
      b([[...notes.keys()], rows.map((n) => n.author), rows.map((n) => n.creator)]),
    );
  }

  async users(ids: string[]): Promise<UserState[]> {
    if (ids.length === 0) return [];
    const res = await this.db.raw<{ rows: { user_id: string; name: string | null; role: string | null; retired: boolean }[] }>(
      'select user_id, name, role, retired from notifier.user_state where user_id = any(?::uuid[])',
      b([ids]),
    );
    return res.rows.map((r) => ({ userId: r.user_id, name: r.name, role: r.role, retired: r.retired }));
  }

  async upsertUsers(users: UserState[]): Promise<void> {
    if (users.length === 0) return;
    await this.db.raw(
      `insert into notifier.user_state (user_id, name, role, retired) select * from unnest(?::uuid[], ?::text[], ?::text[], ?::boolean[])
       on conflict (user_id) do update set name = excluded.name, role = excluded.role, retired = excluded.retired`,
      b([users.map((u) => u.userId), users.map((u) => u.name), users.map((u) => u.role), users.map((u) => u.retired)]),
    );
  }

  /** Live Admin users (who hears that a webhook was disabled). */
  async admins(): Promise<string[]> {
    const res = await this.db.raw<{ rows: { user_id: string }[] }>(
      "select user_id from notifier.user_state where role = 'Admin' and not retired order by user_id",
    );
    return res.rows.map((r) => r.user_id);
  }

  async labels(ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const res = await this.db.raw<{ rows: { record_id: string; label: string }[] }>(
      'select record_id, label from notifier.record_label where record_id = any(?::uuid[])',
      b([ids]),
    );
    return new Map(res.rows.map((r) => [r.record_id, r.label]));
  }

  async upsertLabels(labels: Map<string, string>): Promise<void> {
    if (labels.size === 0) return;
    await this.db.raw(
      `insert into notifier.record_label (record_id, label) select * from unnest(?::uuid[], ?::text[])
       on conflict (record_id) do update set label = excluded.label`,
      b([[...labels.keys()], [...labels.values()]]),
    );
  }

  async activeWebhooks(): Promise<ActiveWebhook[]> {
    const res = await this.db.raw<{ rows: { id: string; kind: string; entity_types: string[]; actions: string[] }[] }>(
      'select id, kind, entity_types, actions from notifier.webhook where active order by id',
    );
    return res.rows.map((r) => ({ id: r.id, kind: r.kind, entityTypes: r.entity_types, actions: r.actions }));
  }

  /** Inserts notifications; one already written for the same user, event and kind is skipped. */
  async insertNotifications(rows: NotificationRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const res = await this.db.raw<{ rowCount: number }>(
      `insert into notifier.notification (id, user_id, kind, record_type, record_id, event_id, actor, project_id, project_known)
       select *, true from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::uuid[], ?::bigint[], ?::uuid[], ?::uuid[])
       on conflict do nothing`,
      b([
        rows.map((r) => r.id),
        rows.map((r) => r.userId),
        rows.map((r) => r.kind),
        rows.map((r) => r.recordType),
        rows.map((r) => r.recordId),
        rows.map((r) => r.eventId),
        rows.map((r) => r.actor),
        rows.map((r) => r.projectId),
      ]),
    );
    return res.rowCount;
  }

  /**
   * Stores the bodies of the events (one per event, the exact bytes every attempt sends) and inserts
   * their deliveries due now, in one statement; a body or a delivery that exists for the same event
   * (and webhook) is skipped. Returns the deliveries inserted.
   */
  async insertDeliveries(bodies: EventBodyRow[], rows: DeliveryRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const res = await this.db.raw<{ rows: { n: string }[] }>(
      `with body as (
         insert into notifier.event_body (id, body, chat_text, event_at) select * from unnest(?::bigint[], ?::text[], ?::text[], ?::timestamptz[])
         on conflict (id) do nothing
       ), queued as (
         insert into notifier.delivery (id, webhook_id, event_id, entity_type, entity_id, action, next_attempt_at)
         select t.*, clock_timestamp() from unnest(?::uuid[], ?::uuid[], ?::bigint[], ?::text[], ?::uuid[], ?::text[]) t
         on conflict (webhook_id, event_id) do nothing
         returning 1
       )
       select count(*) as n from queued`,
      b([
        bodies.map((r) => r.id),
        bodies.map((r) => r.body),
        bodies.map((r) => r.chatText),
        bodies.map((r) => r.eventAt),
        rows.map((r) => r.id),
        rows.map((r) => r.webhookId),
        rows.map((r) => r.eventId),
        rows.map((r) => r.entityType),
        rows.map((r) => r.entityId),
        rows.map((r) => r.action),
      ]),
    );
    return Number(res.rows[0]?.n ?? 0);
  }
}
