/**
 * Graceful shutdown: on SIGINT/SIGTERM, run the registered steps in reverse order of
 * registration (stop accepting, finish in flight, drain NATS, close the pool), each bounded
 * by the overall timeout, then exit.
 */
import type { Logger } from './logger.js';

type Step = { name: string; fn: () => Promise<unknown> | unknown };

export class Shutdown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs = 10_000,
  ) {}

  /** Registers a step; steps run last-registered first. */
  add(name: string, fn: () => Promise<unknown> | unknown): this {
    this.steps.push({ name, fn });
    return this;
  }

  /** Installs the signal handlers; the process exits after the steps ran. */
  install(): this {
    const onSignal = (signal: NodeJS.Signals) => {
      this.logger.info({ signal }, 'shutting down');
      void this.run().then(() => process.exit(0));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    return this;
  }

  /** Runs every step once; later calls return the same promise. */
  run(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      const deadline = setTimeout(() => {
        this.logger.error({ timeoutMs: this.timeoutMs }, 'graceful shutdown timed out; exiting');
        process.exit(1);
      }, this.timeoutMs);
      deadline.unref();
      for (const step of [...this.steps].reverse()) {
        try {
          await step.fn();
        } catch (err) {
          this.logger.warn({ err, step: step.name }, 'shutdown step failed');
        }
      }
      clearTimeout(deadline);
    })();
    return this.running;
  }
}
