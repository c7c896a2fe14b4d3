/**
 * Prunes the delivery log on a timer (docs/notifier.md, "Retention"): delivered deliveries older
 * than `retentionDays`, then the event bodies nothing refers to any more, in batches, until a batch
 * comes back short. `retentionDays` 0 keeps everything.
 */
import { IntervalLoop, type Logger } from '@reelbase/lib-platform';
import type { RetentionStore } from '../domain/ports.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  repo: RetentionStore;
  retentionDays: number;
  intervalMs: number;
  batch: number;
  logger: Logger;
}

export class DeliveryRetention {
  private readonly loop: IntervalLoop;

  constructor(private readonly opts: RetentionOptions) {
    // The first run waits a minute after start-up: a rolling deploy's starts are not also prunes.
    this.loop = new IntervalLoop(
      opts.intervalMs,
      () => this.pruneOnce(),
      (err) => opts.logger.warn({ err }, 'pruning the delivery log failed; trying again at the next interval'),
      { firstMs: Math.min(60_000, opts.intervalMs) },
    );
  }

  start(): void {
    if (this.opts.retentionDays > 0) this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass; `now` for tests. Returns what it deleted. */
  async pruneOnce(now = Date.now()): Promise<{ deliveries: number; bodies: number }> {
    const { repo, batch } = this.opts;
    const cutoff = new Date(now - this.opts.retentionDays * DAY_MS);
    let deliveries = 0;
    let bodies = 0;
    for (;;) {
      const n = await repo.pruneDelivered(cutoff, batch);
      deliveries += n;
      if (n < batch) break;
    }
    for (;;) {
      const n = await repo.pruneBodies(cutoff, batch);
      bodies += n;
      if (n < batch) break;
    }
    if (deliveries > 0 || bodies > 0) this.opts.logger.info({ deliveries, bodies, before: cutoff.toISOString() }, 'pruned the delivery log');
    return { deliveries, bodies };
  }
}
