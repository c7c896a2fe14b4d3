/**
 * The scheduler's clock (docs/scheduler.md, "The tick"): every SCHEDULER_TICK_MS each replica
 * makes the runs of the schedules due by then, a few at a time, until none is due; each run is
 * taken in its own transaction (scheduler.service.ts), so replicas share the work and never
 * make a run twice. A tick that fails (PostgreSQL down) is logged and the next one tries again.
 * Stopping waits for the tick in flight.
 */
import type { BackgroundLoop } from '@reelbase/lib-platform';

/** Runs one replica makes at once. */
export const SCHEDULER_WORKERS = 4;
/** Most runs one worker makes in one tick before the next tick. */
const RUNS_PER_TICK = 100;

export class SchedulerLoop implements BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    private readonly tickMs: number,
    /** Makes one due run; false when nothing is due. */
    private readonly runDue: () => Promise<boolean>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  /** One tick: every worker makes runs until nothing is due. */
  async tick(): Promise<void> {
    const worker = async () => {
      for (let i = 0; i < RUNS_PER_TICK && !this.stopped; i += 1) if (!(await this.runDue())) return;
    };
    await Promise.all(Array.from({ length: SCHEDULER_WORKERS }, worker));
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.inFlight = this.tick()
        .catch(this.onError)
        .finally(() => {
          if (!this.stopped) this.schedule(this.tickMs);
        });
    }, ms);
    this.timer.unref();
  }
}
