/**
 * The one outbox relay (docs/architecture.md, "The write path and its events"): moves
 * committed events from a service's outbox table to JetStream. Woken by the service's
 * in-process bus right after each commit (topic `committed`, see {@link OutboxRelay.wakeOn})
 * and polling for anything a crash left behind; one relay drains at a time across replicas
 * (a session advisory lock held on one connection, see relay.session.ts). Rows are published
 * in `seq` order with `Nats-Msg-Id = event_id` and deleted only after their PubAcks, so a
 * crash anywhere re-publishes rather than loses, and JetStream drops the re-publish as a
 * duplicate. A service configures it with its table, lock key and metric names; the subject
 * of each event is the one its write stored in the row.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { InProcessBus } from '../bus.js';
import { guarded } from '../db.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { ensureEventsStream, type NatsConnection } from '../nats/connection.js';
import type { NatsNames } from '../nats/subjects.js';
import { encodeStreamBatch, encodeStreamEvent, type StreamEvent } from '../stream-event.js';
import { OutboxTable, type OutboxRow } from './outbox.table.js';
import { RelaySession } from './relay.session.js';

/** The bus topic that wakes a relay: a write and its outbox row have committed. */
export type OutboxTopics = {
  committed: StreamEvent;
};

export interface OutboxRelayOptions {
  db: Knex;
  /** The outbox table, `schema.table` (e.g. `records.outbox`). */
  table: string;
  /** The advisory lock one replica holds while it drains (e.g. `records:outbox-relay`). */
  lockKey: string;
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
  metrics: Metrics;
  /** Names of the relay's metrics; default `outbox_published_total` and `outbox_backlog`. */
  metricNames?: { published?: string; backlog?: string };
  pollMs: number;
  /** Rows per drain step. */
  batchSize?: number;
  /** Milliseconds to wait for each PubAck. */
  publishTimeoutMs?: number;
  /** Longest pause between attempts while NATS or PostgreSQL fails. */
  maxBackoffMs?: number;
  /** Called right after JetStream acknowledged a batch, before its rows are deleted (the test-only fault switch). */
  afterPublish?: () => void;
  /**
   * How long acknowledged rows may wait for the next commit's step to delete them (default 25 ms);
   * when no commit comes by then, a step of their own deletes them.
   */
  lingerMs?: number;
}

/** Outcome of one locked drain of the outbox. */
type Pass = { published: number; error?: unknown } | 'locked';

export class OutboxRelay {
  private readonly js: JetStreamClient;
  private readonly table: OutboxTable;
  private readonly backlog;
  private readonly published;
  private timer: NodeJS.Timeout | undefined;
  /** A drain asked for by a commit of this turn of the event loop (see {@link wakeOn}). */
  private wake: NodeJS.Immediate | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  /**
   * A drain asked for by {@link drain} (a poll, stop, a test) deletes what it published before it
   * ends; one woken by a commit leaves that delete to the next commit's step (see {@link pass}).
   */
  private settle = false;
  /** Deletes acknowledged rows that no commit's step took along (see {@link pass}). */
  private linger: NodeJS.Timeout | undefined;
  private failures = 0;
  private retryAt = 0;
  private stopped = true;
  /** Seqs published and acknowledged, deleted by the next drain step. */
  private publishedSeqs: string[] = [];
  /** Commits announced by {@link nudge}, and their count when the last drain step was issued. */
  private commits = 0;
  private commitsSeen = 0;
  private readonly session: RelaySession;

  constructor(private readonly opts: OutboxRelayOptions) {
    this.js = jetstream(opts.nc);
    this.table = new OutboxTable(opts.table);
    this.session = new RelaySession(opts.db, opts.lockKey);
    this.backlog = opts.metrics.gauge(opts.metricNames?.backlog ?? 'outbox_backlog', `Rows of ${opts.table} waiting to be published`);
    this.published = opts.metrics.counter(
      opts.metricNames?.published ?? 'outbox_published_total',
      `Events of ${opts.table} published to JetStream by the relay`,
      ['duplicate'],
    );
  }

  /**
   * Subscribes the relay to `committed` on the service's bus: every commit asks for a drain. The
   * drain starts on the next turn of the event loop (one `setImmediate` for all the commits of a
   * turn), so the write that committed answers its caller first: the relay's statement is not
   * built and sent on the write's path.
   */
  wakeOn(bus: InProcessBus<OutboxTopics>): () => void {
    const off = bus.subscribe('committed', () => {
      if (this.wake !== undefined) return;
      this.wake = setImmediate(() => {
        this.wake = undefined;
        this.nudge();
      });
    });
    return () => {
      off();
      if (this.wake !== undefined) clearImmediate(this.wake);
      this.wake = undefined;
    };
  }

  /** Starts polling and drains whatever is already waiting. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /**
   * Asks for a drain as soon as possible. A service never calls it: its commits reach the relay
   * through the bus topic `committed` ({@link wakeOn}), the one way a relay is woken.
   */
  nudge(): void {
    this.commits++;
    if (this.stopped || Date.now() < this.retryAt) return;
    void this.run();
  }

  /**
   * Drains until the outbox is empty (what was published deleted too), another relay holds the
   * lock, or a publish fails. Concurrent calls share one run; a call during a run makes it go
   * round once more.
   */
  drain(): Promise<void> {
    this.settle = true;
    return this.run();
  }

  private run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.drainAll();
        } while (this.again && Date.now() >= this.retryAt);
      } finally {
        this.running = null;
        this.settle = false;
      }
    })();
    return this.running;
  }

  /** Stops polling after a final drain. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.linger);
    this.retryAt = 0;
    await this.drain();
    await this.session.release();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.drain().finally(() => this.schedule(Math.max(this.opts.pollMs, this.retryAt - Date.now())));
    }, ms);
    this.timer.unref();
  }

  private async drainAll(): Promise<void> {
    try {
      const pass = await this.pass();
      if (pass !== 'locked' && pass.error !== undefined) throw pass.error;
      this.failures = 0;
      this.retryAt = 0;
      if (pass !== 'locked') {
        // Drained to empty: no count query needed (that would be one more query per write).
        this.backlog.set(0);
        return;
      }
    } catch (err) {
      this.failures++;
      const wait = Math.min(this.opts.pollMs * 2 ** Math.min(this.failures, 10), this.opts.maxBackoffMs ?? 10_000);
      this.retryAt = Date.now() + wait;
      this.opts.logger.warn({ err, failures: this.failures, retryInMs: wait, table: this.opts.table }, 'outbox relay could not publish; rows kept for retry');
      if (/jetstream is not enabled|stream not found|no responders/i.test(String((err as Error)?.message))) {
        // The stream vanished (or was never made on this server): recreate it before the retry.
        await ensureEventsStream(this.opts.nc, this.opts.names).catch(() => {});
      }
    }
    await guarded(() => this.table.count(this.opts.db))
      .then((n) => this.backlog.set(n))
      .catch(() => {});
  }

  /**
   * The message body of a row. Writes refuse events above their size limit, but a row written
   * under a larger limit (or a server whose max_payload shrank) must not block the outbox for
   * ever: it is published with its changes left out and `changes_truncated: true`, loudly.
   */
  private body(row: OutboxRow): string {
    // A batch's events travel as one message (stream-event.ts, encodeStreamBatch).
    const batch = (row.payload as { batch?: unknown }).batch;
    const events = Array.isArray(batch) ? (batch as StreamEvent[]) : undefined;
    const json = events ? encodeStreamBatch(events) : encodeStreamEvent(row.payload);
    const max = (this.opts.nc.info?.max_payload ?? Number.MAX_SAFE_INTEGER) - 4096;
    if (json.length * 3 <= max || Buffer.byteLength(json) <= max) return json;
    this.opts.logger.error(
      { event_id: row.eventId, bytes: Buffer.byteLength(json), max },
      'event larger than the NATS max_payload: published without its changes',
    );
    const truncated = (e: StreamEvent): StreamEvent => ({ ...e, changes: {}, changes_truncated: true });
    return events ? encodeStreamBatch(events.map(truncated)) : encodeStreamEvent(truncated(row.payload));
  }

  /**
   * Drains until a step finds nothing (as the lock holder). Each step is one statement that
   * deletes what earlier steps published and reads the next batch; a batch is published in
   * order and its acks awaited together. The statement that reads the next batch runs while
   * the current batch's acks are awaited (it leaves that batch's rows alone), so a busy outbox
   * pays for the larger of the two round trips, not their sum; the next batch is published
   * only once every row of the current one is acknowledged, so rows still reach the stream in
   * `seq` order. Rows are deleted only by a statement issued after their acks, so a crash in
   * between re-publishes them and JetStream drops the copies (Nats-Msg-Id); consumers drop
   * them by event id after that.
   *
   * A run woken by commits does not spend a statement of its own on deleting its last batch:
   * the next commit's step deletes it while it reads that commit's row, so one create at a time
   * costs one relay statement instead of two. When no commit comes within `lingerMs`, a drain
   * deletes them (and a crash meanwhile only re-publishes rows JetStream already has).
   */
  private async pass(): Promise<Pass> {
    const batchSize = this.opts.batchSize ?? 200;
    const timeout = this.opts.publishTimeoutMs ?? 5000;
    const step = (remove: readonly string[], skip: readonly string[]) =>
      guarded(async () => {
        if (!(await this.session.acquire())) return 'locked' as const;
        // This step sees every commit announced so far.
        this.commitsSeen = this.commits;
        return this.table.nextBatch(this.session, remove, batchSize, skip);
      });
    let published = 0;
    clearTimeout(this.linger);
    this.linger = undefined;
    let first = await step(this.publishedSeqs, []);
    if (first === 'locked') return 'locked';
    this.publishedSeqs = [];
    let rows: OutboxRow[] = first;
    while (rows.length > 0) {
      // Publishes are issued back to back on one connection, so the stream stores them in
      // seq order; only the acks are awaited together.
      const acks = rows.map((r) => this.js.publish(r.subject, this.body(r), { msgID: r.eventId, timeout }));
      const remove = this.publishedSeqs;
      // Read on while the acks are awaited only when a commit was announced since the last
      // step: otherwise that read would most likely find nothing and cost a statement.
      const next =
        this.commits !== this.commitsSeen
          ? step(
              remove,
              rows.map((r) => r.seq),
            ).then(
              (v) => ({ ok: true as const, v }),
              (err: unknown) => ({ ok: false as const, err }),
            )
          : null;
      const settled = await Promise.allSettled(acks);
      const firstFailure = settled.findIndex((s) => s.status === 'rejected');
      const done = firstFailure === -1 ? settled.length : firstFailure;
      for (const s of settled.slice(0, done)) {
        if (s.status === 'fulfilled') this.published.inc({ duplicate: String(s.value.duplicate) });
      }
      if (done > 0) this.opts.afterPublish?.();
      published += done;
      const read = next ? await next : null;
      // Only the acknowledged prefix is deleted (by a later statement): the rest is retried in
      // order (a later row that did get through is dropped by JetStream as a duplicate on retry).
      const acked = rows.slice(0, done).map((r) => r.seq);
      const removed = read !== null && read.ok && read.v !== 'locked';
      this.publishedSeqs = removed ? acked : [...remove, ...acked];
      if (firstFailure !== -1) {
        return { published, error: (settled[firstFailure] as PromiseRejectedResult).reason };
      }
      if (read && !read.ok) return { published, error: read.err };
      if (read?.v === 'locked') return 'locked';
      rows = read ? (read.v as OutboxRow[]) : [];
      if (rows.length === 0 && this.publishedSeqs.length > 0) {
        if (!this.settle) {
          // Woken by a commit: the next one's step deletes these rows.
          this.linger ??= setTimeout(() => {
            this.linger = undefined;
            if (!this.stopped) void this.drain();
          }, this.opts.lingerMs ?? 25);
          this.linger.unref();
          break;
        }
        // The batch is published and nothing was read beside it: one more step deletes its
        // rows and looks for more.
        first = await step(this.publishedSeqs, []);
        if (first === 'locked') return 'locked';
        this.publishedSeqs = [];
        rows = first;
      }
    }
    return { published };
  }
}
