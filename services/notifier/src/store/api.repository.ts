/**
 * SQL behind the notifier's gRPC API: a user's notifications, webhooks and their deliveries.
 * Timestamps leave formatted by PostgreSQL (lib-platform time.ts); pages are keyset pages on
 * the UUID v7 ids, newest first.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlIsoMicros } from '@reelbase/lib-platform';
import type { DeliveryView, NewWebhook, NotificationView, NotifierApiStore, RetryOutcome, WebhookChange, WebhookView } from '../domain/ports.js';
import type { WebhookSecrets } from './webhook.secrets.js';

type Db = Knex | Knex.Transaction;
const b = (v: unknown[]) => v as unknown as Knex.RawBinding[];

const N_COLS = `id, kind, record_type, record_id, event_id, actor, ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('read_at')} as read_at`;
const W_COLS = `id, url, kind, secret is not null as has_secret, entity_types, actions, active, ${sqlIsoMicros('disabled_at')} as disabled_at,
  created_by, ${sqlIsoMicros('created_at')} as created_at, ${sqlIsoMicros('updated_at')} as updated_at`;
const D_COLS = `id, webhook_id, event_id, entity_type, entity_id, action, status, attempts, status_code, latency_ms, response, error,
  case when status = 'pending' then ${sqlIsoMicros('next_attempt_at')} end as next_attempt_at, ${sqlIsoMicros('last_attempt_at')} as last_attempt_at,
  ${sqlIsoMicros('delivered_at')} as delivered_at, ${sqlIsoMicros('created_at')} as created_at`;

/**
 * The condition that leaves out the notifications about `hidden` projects (docs/api-notes.md,
 * "Restricted projects"), and those whose project is not known yet (made before notifications
 * kept it, until the follower has looked it up) while anything is hidden. Nothing when nothing is.
 */
function visibleSql(hidden: readonly string[]): { sql: string; params: unknown[] } {
  if (hidden.length === 0) return { sql: '', params: [] };
  return { sql: 'and project_known and (project_id is null or project_id <> all(?::uuid[]))', params: [hidden] };
}

interface NRow {
  id: string;
  kind: string;
  record_type: string;
  record_id: string;
  event_id: string | null;
  actor: string | null;
  created_at: string;
  read_at: string | null;
}
const toNotification = (r: NRow): NotificationView => ({
  id: r.id,
  kind: r.kind,
  recordType: r.record_type,
  recordId: r.record_id,
  eventId: r.event_id === null ? null : Number(r.event_id),
  actor: r.actor,
  createdAt: r.created_at,
  readAt: r.read_at,
});

interface WRow {
  id: string;
  url: string;
  kind: string;
  has_secret: boolean;
  entity_types: string[];
  actions: string[];
  active: boolean;
  disabled_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}
const toWebhook = (r: WRow): WebhookView => ({
  id: r.id,
  url: r.url,
  kind: r.kind,
  hasSecret: r.has_secret,
  entityTypes: r.entity_types,
  actions: r.actions,
  active: r.active,
  disabledAt: r.disabled_at,
  createdBy: r.created_by,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface DRow {
  id: string;
  webhook_id: string;
  event_id: string;
  entity_type: string;
  entity_id: string;
  action: string;
  status: string;
  attempts: number;
  status_code: number | null;
  latency_ms: number | null;
  response: string | null;
  error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}
const toDelivery = (r: DRow): DeliveryView => ({
  id: r.id,
  webhookId: r.webhook_id,
  eventId: Number(r.event_id),
  entityType: r.entity_type,
  entityId: r.entity_id,
  action: r.action,
  status: r.status,
  attempts: r.attempts,
  statusCode: r.status_code,
  latencyMs: r.latency_ms,
  response: r.response,
  error: r.error,
  nextAttemptAt: r.next_attempt_at,
  lastAttemptAt: r.last_attempt_at,
  deliveredAt: r.delivered_at,
  createdAt: r.created_at,
});

export class ApiRepository implements NotifierApiStore {
  /** Secrets are written sealed (webhook.secrets.ts) and never read back here. */
  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: WebhookSecrets,
  ) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  notifications(userId: string, unreadOnly: boolean, limit: number, before: string | null, hidden: readonly string[]): Promise<NotificationView[]> {
    return guarded(() => this.notificationsIn(this.db, userId, unreadOnly, limit, before, hidden));
  }

  markRead(userId: string, id: string, hidden: readonly string[]): Promise<NotificationView | undefined> {
    return guarded(() => this.markReadIn(this.db, userId, id, hidden));
  }

  markAllRead(userId: string, hidden: readonly string[]): Promise<number> {
    return guarded(() => this.markAllReadIn(this.db, userId, hidden));
  }

  createWebhook(w: NewWebhook): Promise<WebhookView> {
    return guarded(() => this.createWebhookIn(this.db, w));
  }

  webhooks(): Promise<WebhookView[]> {
    return guarded(() => this.webhooksIn(this.db));
  }

  webhook(id: string): Promise<WebhookView | undefined> {
    return guarded(() => this.webhookIn(this.db, id));
  }

  updateWebhook(id: string, c: WebhookChange): Promise<WebhookView | undefined> {
    return guarded(() => this.updateWebhookIn(this.db, id, c));
  }

  deleteWebhook(id: string): Promise<boolean> {
    return guarded(() => this.deleteWebhookIn(this.db, id));
  }

  deliveries(webhookId: string, status: string | null, limit: number, before: string | null): Promise<DeliveryView[] | null> {
    return guarded(async () => {
      const db = this.db;
      if (!(await this.webhookIn(db, webhookId))) return null;
      return this.deliveriesIn(db, webhookId, status, limit, before);
    });
  }

  retry(webhookId: string, deliveryId: string): Promise<RetryOutcome> {
    return guarded(() =>
      this.db.transaction(async (trx): Promise<RetryOutcome> => {
        if (!(await this.webhookIn(trx, webhookId))) return { kind: 'no_webhook' };
        const delivery = await this.retryIn(trx, webhookId, deliveryId);
        return delivery ? { kind: 'retried', delivery } : { kind: 'no_delivery' };
      }),
    );
  }

  /** `limit + 1` notifications of `userId` below `before` (newest first), none of `hidden`. */
  private async notificationsIn(
    db: Db,
    userId: string,
    unreadOnly: boolean,
    limit: number,
    before: string | null,
    hidden: readonly string[],
  ): Promise<NotificationView[]> {
    const visible = visibleSql(hidden);
    const res = await db.raw<{ rows: NRow[] }>(
      `select ${N_COLS} from notifier.notification where user_id = ? ${unreadOnly ? 'and read_at is null' : ''} ${before ? 'and id < ?' : ''}
        ${visible.sql} order by id desc limit ?`,
      b([userId, ...(before ? [before] : []), ...visible.params, limit + 1]),
    );
    return res.rows.map(toNotification);
  }

  /** Marks one of `userId`'s notifications read (kept as first read); undefined when it is not theirs or is hidden. */
  private async markReadIn(db: Db, userId: string, id: string, hidden: readonly string[]): Promise<NotificationView | undefined> {
    const visible = visibleSql(hidden);
    const res = await db.raw<{ rows: NRow[] }>(
      `update notifier.notification set read_at = coalesce(read_at, clock_timestamp()) where id = ? and user_id = ? ${visible.sql} returning ${N_COLS}`,
      b([id, userId, ...visible.params]),
    );
    return res.rows[0] ? toNotification(res.rows[0]) : undefined;
  }

  private async markAllReadIn(db: Db, userId: string, hidden: readonly string[]): Promise<number> {
    const visible = visibleSql(hidden);
    const res = await db.raw<{ rowCount: number }>(
      `update notifier.notification set read_at = clock_timestamp() where user_id = ? and read_at is null ${visible.sql}`,
      b([userId, ...visible.params]),
    );
    return res.rowCount;
  }

  private async createWebhookIn(db: Db, w: NewWebhook): Promise<WebhookView> {
    const res = await db.raw<{ rows: WRow[] }>(
      `insert into notifier.webhook (id, url, kind, secret, entity_types, actions, active, created_by)
       values (?, ?, ?, ?, ?::text[], ?::text[], ?, ?) returning ${W_COLS}`,
      b([w.id, w.url, w.kind, w.secret === null ? null : this.secrets.seal(w.id, w.secret), w.entityTypes, w.actions, w.active, w.createdBy]),
    );
    return toWebhook(res.rows[0]!);
  }

  private async webhooksIn(db: Db): Promise<WebhookView[]> {
    const res = await db.raw<{ rows: WRow[] }>(`select ${W_COLS} from notifier.webhook order by id`);
    return res.rows.map(toWebhook);
  }

  private async webhookIn(db: Db, id: string): Promise<WebhookView | undefined> {
    const res = await db.raw<{ rows: WRow[] }>(`select ${W_COLS} from notifier.webhook where id = ?`, [id]);
    return res.rows[0] ? toWebhook(res.rows[0]) : undefined;
  }

  /**
   * Applies a change. Switching a webhook on clears the notifier's disabling and its failure
   * streak, so it is judged afresh.
   */
  private async updateWebhookIn(db: Db, id: string, c: WebhookChange): Promise<WebhookView | undefined> {
    const sets: string[] = ['updated_at = clock_timestamp()'];
    const binds: unknown[] = [];
    const set = (sql: string, v: unknown) => {
      sets.push(sql);
      binds.push(v);
    };
    if (c.url !== undefined) set('url = ?', c.url);
    if (c.kind !== undefined) set('kind = ?', c.kind);
    if (c.secret !== undefined) set('secret = ?', c.secret === null ? null : this.secrets.seal(id, c.secret));
    if (c.entityTypes !== undefined) set('entity_types = ?::text[]', c.entityTypes);
    if (c.actions !== undefined) set('actions = ?::text[]', c.actions);
    if (c.active !== undefined) {
      set('active = ?', c.active);
      if (c.active) sets.push('disabled_at = null', 'failing_since = null');
    }
    const res = await db.raw<{ rows: WRow[] }>(`update notifier.webhook set ${sets.join(', ')} where id = ? returning ${W_COLS}`, b([...binds, id]));
    return res.rows[0] ? toWebhook(res.rows[0]) : undefined;
  }

  /** Deletes the webhook and its deliveries; false when there was none. */
  private async deleteWebhookIn(db: Db, id: string): Promise<boolean> {
    const res = await db.raw<{ rowCount: number }>('delete from notifier.webhook where id = ?', [id]);
    return res.rowCount > 0;
  }

  /** `limit + 1` deliveries of a webhook below `before` (newest first). */
  private async deliveriesIn(db: Db, webhookId: string, status: string | null, limit: number, before: string | null): Promise<DeliveryView[]> {
    const res = await db.raw<{ rows: DRow[] }>(
      `select ${D_COLS} from notifier.delivery where webhook_id = ? ${status ? 'and status = ?' : ''} ${before ? 'and id < ?' : ''}
        order by id desc limit ?`,
      [webhookId, ...(status ? [status] : []), ...(before ? [before] : []), limit + 1],
    );
    return res.rows.map(toDelivery);
  }

  /**
   * Puts a delivery back in line for an attempt now, with a fresh retry window; a delivery
   * already delivered is sent again (a receiver asked for it). A webhook the notifier switched
   * off is switched on again (an Admin retrying by hand says the target is back); one an Admin
   * switched off stays off, and the delivery waits for it. Undefined when the delivery is not
   * one of the webhook's.
   */
  private async retryIn(db: Db, webhookId: string, deliveryId: string): Promise<DeliveryView | undefined> {
    const res = await db.raw<{ rows: DRow[] }>(
      `update notifier.delivery set status = 'pending', next_attempt_at = clock_timestamp(), first_attempt_at = null, claim = null,
              delivered_at = null
        where id = ? and webhook_id = ? returning ${D_COLS}`,
      [deliveryId, webhookId],
    );
    if (!res.rows[0]) return undefined;
    await db.raw(
      `update notifier.webhook set line_from = least(line_from, ?),
              active = active or disabled_at is not null, failing_since = case when disabled_at is not null then null else failing_since end,
              disabled_at = null, updated_at = clock_timestamp()
        where id = ?`,
      [res.rows[0].event_id, webhookId],
    );
    return toDelivery(res.rows[0]);
  }
}
