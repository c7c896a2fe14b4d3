/**
 * The one `main.ts` of every service: load the configuration (invalid → exit 78, see
 * config.ts), start, log `<name> started` with the ports, stop gracefully on SIGINT/SIGTERM.
 * A start that fails is logged as fatal and exits 1, after the service closed what it had
 * opened (see {@link withResources}).
 */
import type { LevelWithSilent } from 'pino';
import { createLogger, type Logger } from '../logger.js';
import { installShutdown, type ServiceProcess } from './shutdown.js';

/** What every `start<Name>()` resolves with. */
export interface RunningService {
  /** The gRPC port, for services that serve gRPC. */
  grpcPort?: number;
  /** The HTTP port: the ops server (`HTTP_PORT`) of a gRPC service, the API (`GATEWAY_PORT`) of the gateway. */
  httpPort: number;
  /** The ops port when it is not `httpPort` (the gateway). */
  opsPort?: number;
  /** Stops accepting work, finishes what is in flight and closes everything it opened; idempotent. */
  stop(): Promise<void>;
}

/** The settings the lifecycle itself reads (every service has them, see `commonConfig`). */
export interface LifecycleConfig {
  LOG_LEVEL: LevelWithSilent;
  SHUTDOWN_TIMEOUT_MS: number;
}

export interface ServiceDefinition<C extends LifecycleConfig, R extends RunningService> {
  /** Service name, as in logs and metrics. */
  name: string;
  /** The validated read of the environment; exits 78 itself when it is invalid. */
  loadConfig: () => C;
  start: (config: C, logger: Logger) => Promise<R>;
}

export interface RunServiceOptions {
  process?: ServiceProcess;
  /** Replaces the service's root logger (tests). */
  logger?: Logger;
}

/**
 * Runs a service as the process's main: resolves with the running service once started;
 * on a failed start logs fatal and exits 1 (resolving undefined when `exit` returns, as a
 * test's fake does).
 */
export async function runService<C extends LifecycleConfig, R extends RunningService>(
  def: ServiceDefinition<C, R>,
  opts: RunServiceOptions = {},
): Promise<R | undefined> {
  const proc = opts.process ?? process;
  const config = def.loadConfig();
  const logger = opts.logger ?? createLogger(def.name, config.LOG_LEVEL);
  // Past start-up a crash is still one fatal line in the service's log, then exit 1.
  const crash = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, `${def.name} ${kind}`);
    proc.exit(1);
  };
  proc.on('uncaughtException', crash('crashed: uncaught exception'));
  proc.on('unhandledRejection', crash('crashed: unhandled rejection'));

  let running: R;
  try {
    running = await def.start(config, logger);
  } catch (err) {
    logger.fatal({ err }, `${def.name} failed to start`);
    proc.exit(1);
    return undefined;
  }
  installShutdown({ name: def.name, logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS, stop: () => running.stop(), process: proc });
  const ports = { grpcPort: running.grpcPort, httpPort: running.httpPort, opsPort: running.opsPort };
  logger.info(ports, `${def.name} started`);
  return running;
}
