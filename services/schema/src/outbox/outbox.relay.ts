/**
 * Moves committed schema events from `schema.outbox` to JetStream, the way records' relay does
 * (docs/architecture.md, "The write path and its events"): woken after each commit and
 * polling for rows a crash left behind; one replica drains at a time (a session advisory lock
 * on one held connection); rows are published in `seq` order with `Nats-Msg-Id = event_id`
 * and deleted only after their PubAcks, so a crash re-publishes rather than loses, and
 * JetStream drops the copy.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import {
  LockedConnection,
  encodeStreamEvent,
  ensureEventsStream,
  type Logger,
  type Metrics,
  type NatsConnection,
  type NatsNames,
  type StreamEvent,
} from '@reelbase/lib-platform';

const LOCK_KEY = 'schema:outbox-relay';

export interface SchemaRelayOptions {
  db: Knex;
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
  metrics: Metrics;
  pollMs: number;
  batchSize?: number;
  publishTimeoutMs?: number;
}

interface OutboxRow {
  seq: string;
  event_id: string;
  subject: string;
  payload: StreamEvent;
}

export class SchemaOutboxRelay {
  private readonly js: JetStreamClient;
  private readonly published;
  private conn: LockedConnection | null = null;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private failures = 0;

  constructor(private readonly opts: SchemaRelayOptions) {
    this.js = jetstream(opts.nc);
    this.published = opts.metrics.counter('schema_outbox_published_total', 'Schema events published to JetStream by the relay');
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Asks for a drain as soon as possible (after each commit). */
  nudge(): void {
    if (!this.stopped) void this.drain();
  }

  /** Drains until empty or another replica holds the lock; concurrent calls share one run. */
  drain(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.drainOnce();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.drain();
    await this.release();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const backoff = Math.min(this.opts.pollMs * 2 ** Math.min(this.failures, 6), 10_000);
      void this.drain().finally(() => this.schedule(this.failures ? backoff : this.opts.pollMs));
    }, ms);
    this.timer.unref();
  }

  private async release(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    await conn?.release();
  }

  private async drainOnce(): Promise<void> {
    const batchSize = this.opts.batchSize ?? 200;
    const timeout = this.opts.publishTimeoutMs ?? 5000;
    try {
      if (!this.conn) this.conn = await LockedConnection.tryAcquire(this.opts.db, LOCK_KEY);
      if (!this.conn) return;
      for (;;) {
        const rows = await this.conn.query<OutboxRow>('select seq, event_id, subject, payload from schema.outbox order by seq limit $1', [batchSize]);
        if (rows.length === 0) break;
        // Issued back to back on one connection, so the stream stores them in seq order.
        const acks = rows.map((r) => this.js.publish(r.subject, encodeStreamEvent(r.payload), { msgID: r.event_id, timeout }));
        const settled = await Promise.allSettled(acks);
        const firstFailure = settled.findIndex((s) => s.status === 'rejected');
        const done = firstFailure === -1 ? rows.length : firstFailure;
        if (done > 0) {
          await this.conn.query('delete from schema.outbox where seq = any($1::bigint[])', [
            `{${rows
              .slice(0, done)
              .map((r) => r.seq)
              .join(',')}}`,
          ]);
          this.published.inc(done);
        }
        if (firstFailure !== -1) throw (settled[firstFailure] as PromiseRejectedResult).reason;
        if (rows.length < batchSize) break;
      }
      this.failures = 0;
    } catch (err) {
      this.failures++;
      this.opts.logger.warn({ err, failures: this.failures }, 'schema outbox relay could not publish; rows kept for retry');
      if (this.conn?.lost) await this.release();
      if (/jetstream is not enabled|stream not found|no responders/i.test(String((err as Error)?.message))) {
        await ensureEventsStream(this.opts.nc, this.opts.names).catch(() => {});
      }
    }
  }
}
