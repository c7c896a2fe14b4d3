/**
 * SQL of the delivery engine. Each webhook's pending deliveries form a line in event order;
 * only the head of a line (its lowest event id) is ever claimed, so an event is sent only once
 * the one before it was delivered or went dead. `webhook.line_from` is a lower bound of the
 * line's event ids (raised when a head is delivered or dies, lowered by a retry by hand): the head
 * is looked up from there, so the index scan does not wade through the entries finished rows
 * leave in the partial index until vacuum removes them. A claim sets a lease (`next_attempt_at` moved
 * past the attempt's timeout) and a claim token in one statement over rows locked with
 * `FOR UPDATE SKIP LOCKED`, so replicas share lines without sending one head twice at once; a
 * process that dies mid-attempt leaves the lease to run out, and the head is sent again.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type { AttemptResult, ClaimedDelivery, DeliveryStore, NotificationRow } from '../domain/ports.js';
import { IngestSql } from './ingest.repository.js';
import type { WebhookSecrets } from './webhook.secrets.js';

interface ClaimRow {
  id: string;
  claim: string;
  webhook_id: string;
  event_id: string;
  url: string;
  kind: string;
  secret: string | null;
  body: string;
  chat_text: string | null;
  attempts: number;
  since_event_ms: string;
}

/**
 * Locks the due rows of CTE `candidates` (column `id`), leases them and returns them with what
 * an attempt needs (`first` columns in front).
 */
const leaseAndReturn = (first = '') => `, locked as (
         select d.id from notifier.delivery d join candidates using (id)
          where d.status = 'pending' and d.next_attempt_at <= clock_timestamp()
          for update of d skip locked
       ), claimed as (
         update notifier.delivery d
            set next_attempt_at = clock_timestamp() + ? * interval '1 millisecond',
                first_attempt_at = coalesce(d.first_attempt_at, clock_timestamp()),
                claim = gen_random_uuid()
           from locked where d.id = locked.id
         returning d.id, d.claim, d.webhook_id, d.event_id, d.attempts
       )
       select ${first}c.id, c.claim, c.webhook_id, c.event_id, c.attempts, w.url, w.kind, w.secret, e.body, e.chat_text,
              (extract(epoch from clock_timestamp() - e.event_at) * 1000)::bigint as since_event_ms
         from claimed c join notifier.webhook w on w.id = c.webhook_id join notifier.event_body e on e.id = c.event_id`;

/**
 * The new `line_from` of webhook `w` once its delivery with event id `finished` is no longer
 * pending: that id, unless an older delivery of the line is pending again (a retry by hand that
 * came while this one was in flight).
 */
const raiseLineFrom = (finished: string) => `case when exists (
    select 1 from notifier.delivery p
     where p.webhook_id = w.id and p.status = 'pending' and p.event_id >= w.line_from and p.event_id < ${finished}
  ) then w.line_from else greatest(w.line_from, ${finished}) end`;

const toClaimed = (r: ClaimRow, secrets: WebhookSecrets): ClaimedDelivery => ({
  id: r.id,
  claim: r.claim,
  webhookId: r.webhook_id,
  eventId: Number(r.event_id),
  url: r.url,
  kind: r.kind,
  secret: r.secret === null ? null : secrets.open(r.webhook_id, r.secret),
  body: r.body,
  chatText: r.chat_text,
  attempts: r.attempts,
  sinceEventMs: Number(r.since_event_ms),
});

export class DeliveryRepository implements DeliveryStore {
  /** Opens the sealed webhook secrets of claimed deliveries. */
  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: WebhookSecrets,
  ) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  /** Claims up to `limit` due heads, the longest-waiting first, leasing each for `leaseMs`. */
  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: ClaimRow[] }>(
        `with candidates as (
         select h.id from notifier.webhook w
         cross join lateral (
           select d.id, d.next_attempt_at from notifier.delivery d
            where d.webhook_id = w.id and d.status = 'pending' and d.event_id >= w.line_from order by d.event_id limit 1
         ) h
         where w.active and h.next_attempt_at <= clock_timestamp()
         order by h.next_attempt_at
         limit ?
       )${leaseAndReturn()}`,
        [limit, leaseMs],
      );
      return res.rows.map((r) => toClaimed(r, this.secrets));
    });
  }

  /**
   * Records delivered attempts (each only while its claim still holds) and ends their webhooks'
   * failure streaks, in one statement; for each marked `chain`, also claims its webhook's next
   * head when it is due, so the engine sends it without another round trip. Returns the
   * deliveries recorded (a lost claim means the lease ran out and another attempt took over)
   * and the heads claimed.
   */
  deliveredMany(
    items: { d: ClaimedDelivery; r: AttemptResult; chain: boolean }[],
    leaseMs: number,
  ): Promise<{ recorded: Set<string>; next: ClaimedDelivery[] }> {
    return guarded(async () => {
      if (items.length === 0) return { recorded: new Set(), next: [] };
      const res = await this.db.raw<{ rows: (ClaimRow & { tag: string })[] }>(
        `with input as (
         select * from unnest(?::uuid[], ?::uuid[], ?::int[], ?::int[], ?::text[], ?::boolean[]) t(id, claim, status_code, latency_ms, response, chain)
       ), done as (
         update notifier.delivery d set status = 'delivered', attempts = d.attempts + 1, status_code = i.status_code, latency_ms = i.latency_ms,
                response = i.response, error = null, next_attempt_at = null, last_attempt_at = clock_timestamp(),
                delivered_at = clock_timestamp(), claim = null
           from input i
          where d.id = i.id and d.claim = i.claim and d.status = 'pending'
         returning d.id, d.webhook_id, d.event_id, i.chain
       ), wh as (
         update notifier.webhook w set failing_since = null, line_from = ${raiseLineFrom('done.event_id')}
           from done where w.id = done.webhook_id
       ), candidates as (
         select h.id from done
           join notifier.webhook w on w.id = done.webhook_id and w.active
           cross join lateral (
             select d.id from notifier.delivery d
              where d.webhook_id = done.webhook_id and d.status = 'pending' and d.event_id >= w.line_from and d.id <> done.id
              order by d.event_id limit 1
           ) h
          where done.chain
       )${leaseAndReturn("'next' as tag, ")}
       union all select 'done', id, null, null, null, null, null, null, null, null, null, null from done`,
        [
          items.map((x) => x.d.id),
          items.map((x) => x.d.claim),
          items.map((x) => x.r.statusCode),
          items.map((x) => x.r.latencyMs),
          items.map((x) => x.r.response),
          items.map((x) => x.chain),
          leaseMs,
        ] as unknown as Knex.RawBinding[],
      );
      const recorded = new Set(res.rows.filter((r) => r.tag === 'done').map((r) => r.id));
      return { recorded, next: res.rows.filter((r) => r.tag === 'next').map((r) => toClaimed(r, this.secrets)) };
    });
  }

  /**
   * Records a failed attempt, judged by the database clock at one instant of this statement:
   * dead when `windowMs` have passed since the delivery's first attempt began, else retried
   * after `delayMs`, but no later than the window's end (the last attempt is placed there). The
   * webhook's failure streak starts (if it had none) when this delivery's first attempt began.
   * Returns the delivery's new status, or null when the claim was lost.
   */
  failed(d: ClaimedDelivery, r: AttemptResult, delayMs: number, windowMs: number): Promise<'pending' | 'dead' | null> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { status: 'pending' | 'dead' }[] }>(
        `with upd as (
         update notifier.delivery d
            set status = case when t.ts >= d.first_attempt_at + t.win then 'dead' else 'pending' end,
                attempts = d.attempts + 1, status_code = ?, latency_ms = ?, response = ?, error = ?,
                next_attempt_at = case when t.ts >= d.first_attempt_at + t.win then null
                                       else least(t.ts + ?::bigint * interval '1 millisecond', d.first_attempt_at + t.win) end,
                last_attempt_at = t.ts, claim = null
           from (select clock_timestamp() as ts, ?::bigint * interval '1 millisecond' as win) t
          where d.id = ? and d.claim = ? and d.status = 'pending'
         returning d.webhook_id, d.event_id, d.status, d.first_attempt_at),
       wh as (
         update notifier.webhook w set failing_since = coalesce(w.failing_since, upd.first_attempt_at),
                line_from = case when upd.status = 'dead' then ${raiseLineFrom('upd.event_id')} else w.line_from end
           from upd where w.id = upd.webhook_id)
       select status from upd`,
        [r.statusCode, r.latencyMs, r.response, r.error, delayMs, windowMs, d.id, d.claim],
      );
      return res.rows[0]?.status ?? null;
    });
  }

  /**
   * Switches the webhook off when it is still active and has been failing since at least
   * `windowMs` ago, and marks dead each of its pending deliveries whose window is over (attempted
   * first at least `windowMs` ago), so none is left waiting on a webhook that no longer sends.
   * When this call switched it off, tells the live Admins (`notify`) in the same transaction and
   * returns how many it told and how many deliveries it marked dead; null otherwise.
   */
  disableIfFailing(webhookId: string, windowMs: number, notify: (admins: string[]) => NotificationRow[]): Promise<{ admins: number; dead: number } | null> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        const res = await trx.raw<{ rows: { disabled: boolean; dead: string }[] }>(
          `with off as (
         update notifier.webhook set active = false, disabled_at = clock_timestamp(), updated_at = clock_timestamp()
          where id = ? and active and failing_since <= clock_timestamp() - ? * interval '1 millisecond'
         returning id),
       overdue as (
         update notifier.delivery d set status = 'dead', next_attempt_at = null, claim = null
           from off
          where d.webhook_id = off.id and d.status = 'pending' and d.first_attempt_at <= clock_timestamp() - ? * interval '1 millisecond'
         returning d.id)
       select exists (select 1 from off) as disabled, (select count(*) from overdue) as dead`,
          [webhookId, windowMs, windowMs],
        );
        const row = res.rows[0];
        if (!row?.disabled) return null;
        const tx = new IngestSql(trx);
        const admins = await tx.admins();
        await tx.insertNotifications(notify(admins));
        return { admins: admins.length, dead: Number(row.dead) };
      }),
    );
  }

  /** Pending deliveries per active webhook, and the number of dead deliveries. */
  backlog(): Promise<{ perWebhook: Map<string, number>; dead: number }> {
    return guarded(async () => {
      const pending = await this.db.raw<{ rows: { webhook_id: string; n: string }[] }>(
        "select webhook_id, count(*) as n from notifier.delivery where status = 'pending' group by webhook_id",
      );
      const deadRows = await this.db.raw<{ rows: { n: string }[] }>("select count(*) as n from notifier.delivery where status = 'dead'");
      const perWebhook = new Map(pending.rows.map((r) => [r.webhook_id, Number(r.n)]));
      const dead = Number(deadRows.rows[0]?.n ?? 0);
      return { perWebhook, dead };
    });
  }

  /** Milliseconds until the earliest head of an active webhook is due (null when none waits). */
  nextDueInMs(): Promise<number | null> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { ms: string | null }[] }>(
        `select (extract(epoch from min(h.next_attempt_at) - clock_timestamp()) * 1000)::bigint as ms from notifier.webhook w
        cross join lateral (select d.next_attempt_at from notifier.delivery d where d.webhook_id = w.id and d.status = 'pending' and d.event_id >= w.line_from order by d.event_id limit 1) h
        where w.active`,
      );
      const ms = res.rows[0]?.ms;
      return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
    });
  }
}
