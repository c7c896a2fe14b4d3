/**
 * `npm start`: the whole stack on this machine with sensible defaults.
 *
 * Reads GATEWAY_PORT (8080), DATABASE_URL, NATS_URL, NATS_PREFIX, S3_ENDPOINT (with
 * S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET, S3_REGION), DATA_DIR (./.data), LOG_LEVEL (info),
 * STACK_FREE_PORTS (1: every internal port is a free ephemeral one; the gateway keeps
 * GATEWAY_PORT) and passes the services' tuning variables through. SIGINT/SIGTERM stop
 * everything and exit 0; a stack that cannot start, or a service that keeps crashing,
 * exits 1 with the reason.
 */
import { resolve } from 'node:path';
import { s3FromEnv } from './deps.js';
import { startStack, type Stack } from './stack.js';

/** Service settings a developer may set for `npm start`; handed to every service as given. */
const PASSED_THROUGH = [
  'SHUTDOWN_TIMEOUT_MS', 'JWT_TTL_SECONDS', 'JWT_ISSUER', 'PASSWORD_SCRYPT_COST', 'LOGIN_MAX_FAILURES',
  'OUTBOX_POLL_MS', 'RATE_LIMIT_RPS', 'RATE_LIMIT_BURST', 'AUTH_CACHE_SECONDS', 'WS_PING_SECONDS', 'RPC_DEADLINE_MS',
];

const say = (line: string) => process.stdout.write(`[stack] ${line}\n`);
const fail = (line: string) => process.stderr.write(`[stack] ${line}\n`);

function parsePort(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`GATEWAY_PORT must be a port number (0-65535), got ${JSON.stringify(value)}`);
  return n;
}

async function main(): Promise<number> {
  const env = process.env;
  let stack: Stack | undefined;
  let stopRequested: NodeJS.Signals | undefined;
  let stopRequestedAt = 0;
  const stopped = new Promise<number>((resolveExit) => {
    const onSignal = (sig: NodeJS.Signals) => {
      if (stopRequested) {
        // `npm start` relays the terminal's Ctrl-C, so one keypress often arrives twice.
        if (Date.now() - stopRequestedAt > 2000) fail(`${sig} again: still stopping (each service gets its shutdown timeout, then SIGKILL)`);
        return;
      }
      stopRequested = sig;
      stopRequestedAt = Date.now();
      // While starting, main() stops what was started once startStack settles.
      if (!stack) return say(`${sig}: stopping as soon as the start-up settles`);
      say(`${sig}: stopping every service`);
      void stack.stop().then(() => {
        say('stopped');
        resolveExit(0);
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });

  const gatewayPort = parsePort(env.GATEWAY_PORT, 8080);
  const passed: Record<string, string> = {};
  for (const k of PASSED_THROUGH) if (env[k]) passed[k] = env[k]!;
  const starting = startStack({
    dataDir: resolve(env.DATA_DIR || '.data'),
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    natsPrefix: env.NATS_PREFIX || '',
    s3: s3FromEnv(env),
    gatewayPort,
    freePorts: env.STACK_FREE_PORTS === '1',
    logLevel: env.LOG_LEVEL || 'info',
    env: passed,
    log: say,
  });
  let started: Stack;
  try {
    started = await starting;
  } catch (err) {
    if (stopRequested) return 0;
    fail(`reelbase could not start: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  if (stopRequested) {
    await started.stop();
    say('stopped');
    return 0;
  }
  stack = started;
  const port = new URL(stack.url).port;
  say(`reelbase is up: http://localhost:${port}`);
  say(`readiness: http://localhost:${port}/readyz · API description: http://localhost:${port}/openapi.json · Ctrl-C stops everything`);
  const fatal = stack.fatal.then((err) => {
    fail(`reelbase stopped: ${err.message}`);
    return 1;
  });
  return Promise.race([stopped, fatal]);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    fail(`reelbase could not start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
