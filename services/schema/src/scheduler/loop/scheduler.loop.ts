/**
 * The scheduler's clock (docs/scheduler.md, "The tick"): every SCHEDULER_TICK_MS each replica
 * makes the runs of the schedules due by then, a few at a time, until none is due; each run is
 * taken in its own transaction (scheduler.service.ts), so replicas share the work and never
 * make a run twice. A tick that fails (PostgreSQL down) is logged and the next one tries again.
 * Stopping waits for the tick in flight.
 */
import { IntervalLoop, type BackgroundLoop } from '@reelbase/lib-platform';

/** Runs one replica makes at once. */
export const SCHEDULER_WORKERS = 4;
/** Most runs one worker makes in one tick before the next tick. */
const RUNS_PER_TICK = 100;

/** The scheduler's {@link IntervalLoop}: its first tick at once (on the next turn), then one every `tickMs` after the previous ended. */
export class SchedulerLoop implements BackgroundLoop {
  private readonly loop: IntervalLoop;

  constructor(
    tickMs: number,
    /** Makes one due run; false when nothing is due. */
    private readonly runDue: () => Promise<boolean>,
    onError: (err: unknown) => void,
  ) {
    this.loop = new IntervalLoop(tickMs, (signal) => this.tick(signal), onError, { firstMs: 0 });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One tick: every worker makes runs until nothing is due (or the loop stops). */
  async tick(signal?: AbortSignal): Promise<void> {
    const worker = async () => {
      for (let i = 0; i < RUNS_PER_TICK && !signal?.aborted; i += 1) if (!(await this.runDue())) return;
    };
    await Promise.all(Array.from({ length: SCHEDULER_WORKERS }, worker));
  }
}
