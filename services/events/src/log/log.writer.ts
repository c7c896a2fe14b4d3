/**
 * The single writer of the event log. Every replica runs one; the one holding the
 * PostgreSQL advisory lock consumes the EVENTS stream and appends, the others only serve
 * reads and retry the lock. Messages are appended as they arrive; whatever is already
 * waiting when a batch starts goes into the same transaction.
 */
import { jetstream, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { IntervalLoop, type Logger, type NatsConnection, type NatsNames } from '@reelbase/lib-platform';
import type { LogWriterSession, LogWriterSessions } from '../domain/ports.js';
import { BatchAppender } from './batch.appender.js';
import { consumerLag, ensureLogConsumer } from './log.consumer.js';
import type { WriterMetrics } from './writer.metrics.js';

export interface LogWriterOptions {
  /** Takes the writer lock (store/writer.session.ts); null while another replica holds it. */
  openSession: LogWriterSessions;
  nc: NatsConnection;
  jsm: JetStreamManager;
  names: NatsNames;
  logger: Logger;
  metrics: WriterMetrics;
  /** Most messages appended in one transaction. */
  batchMax: number;
  ackWaitMs: number;
  lockRetryMs: number;
  lagRefreshMs: number;
}

// How long the writer connection may sit idle before a round trip checks it is alive.
const PING_MS = 1000;

export class LogWriter {
  private stopping = false;
  private running: Promise<void> | null = null;
  private waiter: (() => void) | null = null;
  private readonly lagGauge: IntervalLoop;
  private active = false;
  private readonly queue: JsMsg[] = [];
  private readonly appender: BatchAppender;

  constructor(private readonly opts: LogWriterOptions) {
    this.appender = new BatchAppender(opts.nc, opts.names, opts.logger, opts.metrics);
    this.lagGauge = new IntervalLoop(
      opts.lagRefreshMs,
      async () => {
        const lag = await consumerLag(opts.jsm, opts.names);
        if (lag !== null) opts.metrics.lag.set(lag);
      },
      (err) => opts.logger.debug({ err }, 'event-log consumer lag not read'),
      { immediate: true },
    );
  }

  /** True while this replica holds the lock and consumes. */
  get isActive(): boolean {
    return this.active;
  }

  /** Starts competing for the lock in the background. */
  start(): void {
    if (this.running) return;
    this.running = this.loop();
    this.lagGauge.start();
  }

  /** Stops consuming, finishes the batch in flight, nak-s what was not started, gives the lock up. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.poke();
    await Promise.all([this.running, this.lagGauge.stop()]);
  }

  private poke(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** Sleeps up to `ms`, or until poked (a message arrived, the connection died, stop). */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.waiter === done) self.waiter = null;
        resolve();
      }
      this.waiter = done;
    });
  }

  private async loop(): Promise<void> {
    const { logger, metrics } = this.opts;
    while (!this.stopping) {
      let session: LogWriterSession | null = null;
      try {
        session = await this.opts.openSession();
      } catch (err) {
        logger.warn({ err }, 'cannot reach the database to take the writer lock');
      }
      if (!session) {
        await this.wait(this.opts.lockRetryMs);
        continue;
      }
      this.active = true;
      metrics.active.set(1);
      logger.info('holding the event-log writer lock; consuming');
      try {
        await this.runActive(session);
      } catch (err) {
        logger.error({ err }, 'event-log writer stopped; will retry');
      } finally {
        this.active = false;
        metrics.active.set(0);
        await session.close();
      }
      if (!this.stopping) await this.wait(this.opts.lockRetryMs);
    }
  }

  private async runActive(session: LogWriterSession): Promise<void> {
    const { jsm, nc, names, logger, batchMax } = this.opts;
    // Read once under the lock; from here on only this session assigns ids.
    let last = await session.maxId();
    await ensureLogConsumer(jsm, names, this.opts.ackWaitMs);
    const consumer = await jetstream(nc).consumers.get(names.eventsStream, names.eventLogConsumer);
    let accepting = true;
    const messages = await consumer.consume({
      max_messages: Math.max(batchMax * 2, 100),
      callback: (m) => {
        if (!accepting) return m.nak();
        this.queue.push(m);
        this.poke();
      },
    });
    void session.whenLost().then(() => this.poke());
    logger.info({ last }, 'event-log writer resumed');
    try {
      while (!this.stopping && !session.lost) {
        if (this.queue.length === 0) {
          await this.wait(PING_MS);
          if (this.queue.length === 0 && !this.stopping && !session.lost) await session.ping();
          continue;
        }
        last = await this.appender.append(session, last, this.queue.splice(0, batchMax));
      }
      if (session.lost) logger.error({ err: session.lost }, 'writer connection lost; stopped consuming');
    } finally {
      accepting = false;
      await messages.close().catch(() => {});
      // Hand what was delivered but not started back at once instead of after the ack wait.
      for (const m of this.queue.splice(0)) m.nak();
    }
  }
}
