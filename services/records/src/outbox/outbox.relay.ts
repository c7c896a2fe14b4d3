/**
 * Moves committed events from the outbox to JetStream (docs/architecture.md, step 3).
 * Woken right after each commit and polling for anything a crash left behind; one relay
 * drains at a time across replicas (a session advisory lock held on one connection, see
 * relay.session.ts). Rows are published in `seq` order with `Nats-Msg-Id = event_id` and
 * deleted only after their PubAcks, so a crash anywhere re-publishes rather than loses, and
 * JetStream drops the re-publish as a duplicate.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { encodeStreamEvent, ensureEventsStream, type Logger, type Metrics, type NatsConnection, type NatsNames } from '@reelbase/lib-platform';
import type { OutboxRepository, OutboxRow } from '../store/outbox.repository.js';
import type { FaultSwitch } from './fault.switch.js';
import { RelaySession } from './relay.session.js';

export interface OutboxRelayOptions {
  db: Knex;
  outbox: OutboxRepository;
  nc: NatsConnection;
  names: NatsNames;
  logger: Logger;
  metrics: Metrics;
  fault: FaultSwitch;
  pollMs: number;
  /** Rows per transaction. */
  batchSize?: number;
  /** Milliseconds to wait for each PubAck. */
  publishTimeoutMs?: number;
  /** Longest pause between attempts while NATS or PostgreSQL fails. */
  maxBackoffMs?: number;
}

/** Outcome of one locked pass over the outbox. */
type Pass = { published: number; more: boolean; error?: unknown } | 'locked';

export class OutboxRelay {
  private readonly js: JetStreamClient;
  private readonly backlog;
  private readonly published;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private failures = 0;
  private retryAt = 0;
  private stopped = true;
  /** Seqs published and acknowledged, deleted by the next drain step. */
  private publishedSeqs: string[] = [];
  private readonly session: RelaySession;

  constructor(private readonly opts: OutboxRelayOptions) {
    this.js = jetstream(opts.nc);
    this.session = new RelaySession(opts.db);
    this.backlog = opts.metrics.gauge('outbox_backlog', 'Outbox rows waiting to be published');
    this.published = opts.metrics.counter('outbox_published_total', 'Events published to JetStream by the relay', ['duplicate']);
  }

  /** Starts polling and drains whatever is already waiting. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Asks for a drain as soon as possible (called after each commit). */
  nudge(): void {
    if (this.stopped || Date.now() < this.retryAt) return;
    void this.drain();
  }

  /**
   * Drains until the outbox is empty, another relay holds the lock, or a publish fails.
   * Concurrent calls share one run; a call during a run makes it go round once more.
   */
  drain(): Promise<void> {
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
      }
    })();
    return this.running;
  }

  /** Stops polling after a final drain. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
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
      let pass: Pass;
      for (;;) {
        pass = await this.pass();
        if (pass === 'locked') break;
        if (pass.error !== undefined) throw pass.error;
        if (!pass.more) break;
      }
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
      this.opts.logger.warn({ err, failures: this.failures, retryInMs: wait }, 'outbox relay could not publish; rows kept for retry');
      if (/jetstream is not enabled|stream not found|no responders/i.test(String((err as Error)?.message))) {
        // The stream vanished (or was never made on this server): recreate it before the retry.
        await ensureEventsStream(this.opts.nc, this.opts.names).catch(() => {});
      }
    }
    await this.opts.outbox
      .count(this.opts.db)
      .then((n) => this.backlog.set(n))
      .catch(() => {});
  }

  /**
   * The message body of a row. Writes refuse events above MAX_EVENT_BYTES, but a row written
   * under a larger limit (or a server whose max_payload shrank) must not block the outbox for
   * ever: it is published with its changes left out and `changes_truncated: true`, loudly.
   */
  private body(row: OutboxRow): string {
    const json = encodeStreamEvent(row.payload);
    const max = (this.opts.nc.info?.max_payload ?? Number.MAX_SAFE_INTEGER) - 4096;
    if (json.length * 3 <= max || Buffer.byteLength(json) <= max) return json;
    this.opts.logger.error(
      { event_id: row.eventId, bytes: Buffer.byteLength(json), max },
      'event larger than the NATS max_payload: published without its changes',
    );
    return encodeStreamEvent({ ...row.payload, changes: {}, changes_truncated: true });
  }

  /**
   * One drain step: (as the lock holder) delete what the last step published and read the
   * next batch in one statement, publish it in order, await the acks. The acknowledged rows
   * are deleted by the next step, so a crash in between re-publishes them and JetStream
   * drops the copies (Nats-Msg-Id); the event log drops them by event id after that.
   */
  private async pass(): Promise<Pass> {
    const { outbox, fault } = this.opts;
    const batchSize = this.opts.batchSize ?? 200;
    const timeout = this.opts.publishTimeoutMs ?? 5000;
    if (!(await this.session.acquire())) return 'locked';
    const rows = await outbox.nextBatch(this.session, this.publishedSeqs, batchSize);
    this.publishedSeqs = [];
    if (rows.length === 0) return { published: 0, more: false };
    // Publishes are issued back to back on one connection, so the stream stores them in
    // seq order; only the acks are awaited together.
    const acks = rows.map((r) => this.js.publish(r.subject, this.body(r), { msgID: r.eventId, timeout }));
    const settled = await Promise.allSettled(acks);
    const firstFailure = settled.findIndex((s) => s.status === 'rejected');
    const done = firstFailure === -1 ? settled.length : firstFailure;
    for (const s of settled.slice(0, done)) {
      if (s.status === 'fulfilled') this.published.inc({ duplicate: String(s.value.duplicate) });
    }
    if (done > 0) fault.afterPublish();
    // Only the acknowledged prefix is deleted: the rest is retried in order (a later row
    // that did get through is dropped by JetStream as a duplicate on retry).
    this.publishedSeqs = rows.slice(0, done).map((r) => r.seq);
    if (firstFailure !== -1) {
      return { published: done, more: false, error: (settled[firstFailure] as PromiseRejectedResult).reason };
    }
    // Go round once more even after a short batch: that step deletes these rows.
    return { published: rows.length, more: true };
  }
}
