/**
 * The stack a bench measures (bench/README.md, "How it runs"): every service as its own process on
 * free ports, on the bench's own database and NATS prefix, logs at `warn` in files, its lines
 * prefixed `stack:` in the bench's log, and the gateway's per-caller rate limit lifted — it would
 * otherwise cap the load at 50 requests/s. Anything in `opts` is passed on to `startStack`.
 */
import { startStack, type Stack, type StackOptions } from '@reelbase/lib-testkit';

export interface BenchStackOptions extends StackOptions {
  databaseUrl: string;
  natsPrefix: string;
  logDir: string;
  log: (line: string) => void;
}

export function startBenchStack(opts: BenchStackOptions): Promise<Stack> {
  const { log, env, ...rest } = opts;
  return startStack({
    freePorts: true,
    logLevel: 'warn',
    ...rest,
    env: { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000', ...env },
    log: (line) => log(`stack: ${line}`),
  });
}
