/**
 * SQL of the deliveries of webhook actions (docs/notifier.md, "Action deliveries"). The same
 * claim as a webhook's head — rows locked with `FOR UPDATE SKIP LOCKED`, a lease
 * (`next_attempt_at` moved past the attempt's timeout) and a claim token in one statement — but
 * every row is its own line: no webhook, no event order. A failure is judged by the database
 * clock like a webhook delivery's: retried after the backoff, dead once the retry window since
 * the first attempt is over. The action's secret is sealed at rest, bound to the delivery's id.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type { ActionDeliveryStore, AttemptResult, ClaimedDelivery, NewActionDelivery } from '../domain/ports.js';
import type { WebhookSecrets } from './webhook.secrets.js';

interface ClaimRow {
  id: string;
  claim: string;
  action_id: string;
  url: string;
  secret: string | null;
  body: string;
  attempts: number;
  since_created_ms: string;
}

export class ActionDeliveryRepository implements ActionDeliveryStore {
  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: WebhookSecrets,
  ) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  private toClaimed(r: ClaimRow): ClaimedDelivery {
    return {
      id: r.id,
      claim: r.claim,
      webhookId: '',
      actionId: r.action_id,
      eventId: 0,
      url: r.url,
      kind: 'webhook',
      secret: r.secret === null ? null : this.secrets.openAction(r.id, r.secret),
      body: r.body,
      chatText: null,
      attempts: r.attempts,
      sinceEventMs: Number(r.since_created_ms),
    };
  }

  enqueue(d: NewActionDelivery): Promise<string> {
    return guarded(async () => {
      await this.db.raw(
        `insert into notifier.action_delivery (id, action_id, url, secret, body, next_attempt_at)
         values (?, ?, ?, ?, ?, clock_timestamp()) on conflict (id) do nothing`,
        [d.id, d.actionId, d.url, d.secret === null ? null : this.secrets.sealAction(d.id, d.secret), d.body],
      );
      return d.id;
    });
  }

  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: ClaimRow[] }>(
        `with locked as (
         select id from notifier.action_delivery
          where status = 'pending' and next_attempt_at <= clock_timestamp()
          order by next_attempt_at limit ?
          for update skip locked
       )
       update notifier.action_delivery d
          set next_attempt_at = clock_timestamp() + ? * interval '1 millisecond',
              first_attempt_at = coalesce(d.first_attempt_at, clock_timestamp()),
              claim = gen_random_uuid()
         from locked where d.id = locked.id
       returning d.id, d.claim, d.action_id, d.url, d.secret, d.body, d.attempts,
                 (extract(epoch from clock_timestamp() - d.created_at) * 1000)::bigint as since_created_ms`,
        [limit, leaseMs],
      );
      return res.rows.map((r) => this.toClaimed(r));
    });
  }

  delivered(items: { d: ClaimedDelivery; r: AttemptResult }[]): Promise<Set<string>> {
    return guarded(async () => {
      if (items.length === 0) return new Set<string>();
      const res = await this.db.raw<{ rows: { id: string }[] }>(
        `update notifier.action_delivery d set status = 'delivered', attempts = d.attempts + 1, status_code = i.status_code,
                latency_ms = i.latency_ms, response = i.response, error = null, next_attempt_at = null,
                last_attempt_at = clock_timestamp(), delivered_at = clock_timestamp(), claim = null
           from unnest(?::uuid[], ?::uuid[], ?::int[], ?::int[], ?::text[]) i(id, claim, status_code, latency_ms, response)
          where d.id = i.id and d.claim = i.claim and d.status = 'pending'
         returning d.id`,
        [
          items.map((x) => x.d.id),
          items.map((x) => x.d.claim),
          items.map((x) => x.r.statusCode),
          items.map((x) => x.r.latencyMs),
          items.map((x) => x.r.response),
        ] as unknown as Knex.RawBinding[],
      );
      return new Set(res.rows.map((r) => r.id));
    });
  }

  failed(d: ClaimedDelivery, r: AttemptResult, delayMs: number, windowMs: number): Promise<'pending' | 'dead' | null> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { status: 'pending' | 'dead' }[] }>(
        `update notifier.action_delivery d
            set status = case when t.ts >= d.first_attempt_at + t.win then 'dead' else 'pending' end,
                attempts = d.attempts + 1, status_code = ?, latency_ms = ?, response = ?, error = ?,
                next_attempt_at = case when t.ts >= d.first_attempt_at + t.win then null
                                       else least(t.ts + ?::bigint * interval '1 millisecond', d.first_attempt_at + t.win) end,
                last_attempt_at = t.ts, claim = null
           from (select clock_timestamp() as ts, ?::bigint * interval '1 millisecond' as win) t
          where d.id = ? and d.claim = ? and d.status = 'pending'
         returning d.status`,
        [r.statusCode, r.latencyMs, r.response, r.error, delayMs, windowMs, d.id, d.claim],
      );
      return res.rows[0]?.status ?? null;
    });
  }

  nextDueInMs(): Promise<number | null> {
    return guarded(async () => {
      const res = await this.db.raw<{ rows: { ms: string | null }[] }>(
        `select (extract(epoch from min(next_attempt_at) - clock_timestamp()) * 1000)::bigint as ms
           from notifier.action_delivery where status = 'pending'`,
      );
      const ms = res.rows[0]?.ms;
      return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
    });
  }
}
