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

/**
 * A loop that calls `tick` every `intervalMs` (and once at start when `immediate`); a tick that
 * fails is handed to `onError` and the next one runs on time. Its timer never keeps the process alive.
 */
export class IntervalLoop implements BackgroundLoop {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly tick: () => unknown,
    private readonly onError: (err: unknown) => void,
    private readonly opts: { immediate?: boolean } = {},
  ) {}

  start(): void {
    if (this.timer) return;
    if (this.opts.immediate) this.run();
    this.timer = setInterval(() => this.run(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    try {
      Promise.resolve(this.tick()).catch(this.onError);
    } catch (err) {
      this.onError(err);
    }
  }
}
