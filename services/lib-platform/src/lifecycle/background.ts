/**
 * Background loops: relays, consumers, sweepers, followers and timers that run for as long as
 * the service does. Every service starts each one with {@link ResourceStack.startLoop} at the
 * point of its start-up where the loop may begin (after the servers it serves are up), so its
 * stop runs in the stack's reverse order: a relay registered before the gRPC server listens
 * stops (with a last drain) after that server closed.
 */

/** What `startLoop` needs: a start that returns at once and a stop that finishes the work in flight. */
export interface BackgroundLoop {
  start(): void;
  stop(): unknown;
}

/** Default bound on how long {@link IntervalLoop.stop} waits for the tick in flight. */
export const DEFAULT_TICK_STOP_TIMEOUT_MS = 10_000;

export interface IntervalLoopOptions {
  /** Runs the first tick inside `start()` instead of one interval later. */
  immediate?: boolean;
  /** Milliseconds before the first tick when not `immediate` (default: the interval). */
  firstMs?: number;
  /** Longest `stop()` waits for the tick in flight before it rejects (default {@link DEFAULT_TICK_STOP_TIMEOUT_MS}). */
  stopTimeoutMs?: number;
}

/**
 * The one periodic task of every service: calls `tick` every `intervalMs` (a number, or a function
 * asked after each tick for the next pause), once at start when `immediate`. Ticks never overlap:
 * the next one is due `intervalMs` after the previous one ended. A tick that throws or rejects is
 * handed to `onError` and the next one runs on time. `stop()` aborts the signal handed to `tick`,
 * starts no tick after it, and resolves once the tick in flight has finished (rejecting after
 * `stopTimeoutMs` if it has not). Its timer never keeps the process alive.
 */
export class IntervalLoop implements BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private started = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly intervalMs: number | (() => number),
    private readonly tick: (signal: AbortSignal) => unknown,
    private readonly onError: (err: unknown) => void,
    private readonly opts: IntervalLoopOptions = {},
  ) {}

  start(): void {
    if (this.started || this.stopping.signal.aborted) return;
    this.started = true;
    if (this.opts.immediate) this.run();
    else this.schedule(this.opts.firstMs ?? this.nextMs());
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    const current = this.inFlight;
    if (!current) return;
    const ms = this.opts.stopTimeoutMs ?? DEFAULT_TICK_STOP_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the tick in flight did not finish within ${ms} ms`)), ms);
    });
    try {
      await Promise.race([current, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private nextMs(): number {
    return typeof this.intervalMs === 'number' ? this.intervalMs : this.intervalMs();
  }

  private schedule(ms: number): void {
    if (this.stopping.signal.aborted) return;
    this.timer = setTimeout(() => this.run(), ms);
    this.timer.unref();
  }

  private run(): void {
    this.timer = undefined;
    if (this.stopping.signal.aborted) return;
    let result: unknown;
    try {
      result = this.tick(this.stopping.signal);
    } catch (err) {
      this.fail(err);
      return this.schedule(this.nextMs());
    }
    // A tick that returns at once is followed at once by its next timer (no promise to wait for).
    if (!isPromiseLike(result)) return this.schedule(this.nextMs());
    this.inFlight = Promise.resolve(result).then(
      () => this.settled(),
      (err: unknown) => {
        this.fail(err);
        this.settled();
      },
    );
  }

  private settled(): void {
    this.inFlight = undefined;
    this.schedule(this.nextMs());
  }

  private fail(err: unknown): void {
    try {
      this.onError(err);
    } catch {
      // An error handler that throws must not end the loop.
    }
  }
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}
