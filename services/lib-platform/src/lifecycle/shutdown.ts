/**
 * Graceful stop on SIGINT/SIGTERM: the service's stop runs once, bounded by
 * `SHUTDOWN_TIMEOUT_MS`; the process exits 0 when it finished and 1 when the time ran out.
 * Signals that arrive while stopping are logged and otherwise ignored, so a Ctrl-C that
 * reaches the whole process group and the supervisor's own signal do not cut the stop short.
 */
import type { Logger } from '../logger.js';

/** The parts of `process` the lifecycle uses; tests pass a fake. */
export interface ServiceProcess {
  on(event: 'SIGINT' | 'SIGTERM', fn: (signal: NodeJS.Signals) => void): unknown;
  on(event: 'uncaughtException' | 'unhandledRejection', fn: (err: unknown) => void): unknown;
  exit(code: number): void;
}

export interface ShutdownOptions {
  name: string;
  logger: Logger;
  timeoutMs: number;
  stop: () => Promise<void>;
  process?: ServiceProcess;
}

/** Installs the signal handlers; returns the function they call (for callers that stop on their own). */
export function installShutdown(opts: ShutdownOptions): (signal?: NodeJS.Signals) => Promise<void> {
  const proc = opts.process ?? process;
  let stopping: Promise<void> | null = null;
  const shutdown = (signal?: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      opts.logger.info({ signal }, 'already shutting down');
      return stopping;
    }
    opts.logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      opts.logger.error({ timeoutMs: opts.timeoutMs }, 'graceful shutdown timed out; exiting');
      proc.exit(1);
    }, opts.timeoutMs);
    deadline.unref();
    stopping = opts.stop().then(
      () => {
        clearTimeout(deadline);
        opts.logger.info(`${opts.name} stopped`);
        proc.exit(0);
      },
      (err: unknown) => {
        clearTimeout(deadline);
        opts.logger.error({ err }, `${opts.name} did not stop cleanly`);
        proc.exit(1);
      },
    );
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals) => void shutdown(signal);
  proc.on('SIGINT', onSignal);
  proc.on('SIGTERM', onSignal);
  return shutdown;
}
