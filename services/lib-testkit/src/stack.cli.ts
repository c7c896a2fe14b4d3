/**
 * `npm start`: the whole stack on this machine with sensible defaults.
 *
 * Reads GATEWAY_PORT (8080; checked to be free before anything starts), DATABASE_URL,
 * NATS_URL, NATS_PREFIX, S3_ENDPOINT (with S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET,
 * S3_REGION), DATA_DIR (./.data), LOG_LEVEL (info), STACK_EMBEDDED (1: the embedded PostgreSQL
 * and a nats-server child even when servers answer locally), BIND_HOST (127.0.0.1: where the internal
 * gRPC and ops ports listen), INTERNAL_AUTH_SECRET (a random one per run) and SECRETS_KEY (the key
 * secrets are encrypted with at rest; by default one made once and kept in DATA_DIR/secrets.key). Every internal
 * port is a free one. Every other variable set before `npm start` (BODY_LIMIT_BYTES,
 * MAX_EVENT_BYTES, RATE_LIMIT_RPS, …) reaches every service as given.
 *
 * SIGINT, SIGTERM and SIGHUP stop everything in order (gateway first, the databases last)
 * and exit 0 after `[stack] stopped`; a stack that cannot start, or a service that keeps
 * crashing, exits 1 with the reason.
 */
import { resolve } from 'node:path';
import { s3FromEnv } from './deps.js';
import { watchParent } from './parent.js';
import { startStack, type Stack } from './stack.js';

/** Variables the stack sets itself for every service, or that only concern this process or npm. */
const NOT_PASSED = /^(npm_|STACK_PARENT_PID$|GATEWAY_PORT$|DATA_DIR$|BIND_HOST$|INTERNAL_AUTH_SECRET$|SECRETS_KEY$)/;

/** A stop that takes longer than this (every service's own timeout included) is cut short. */
const STOP_DEADLINE_MS = 45_000;

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
  // A closed terminal (SIGHUP) makes writes fail with EIO: keep stopping the stack regardless.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
  let stack: Stack | undefined;
  let stopRequested: NodeJS.Signals | 'parent exit' | undefined;
  let stopRequestedAt = 0;
  const cancelStart = new AbortController();
  let resolveExit!: (code: number) => void;
  const stopped = new Promise<number>((r) => (resolveExit = r));
  const stop = (why: NodeJS.Signals | 'parent exit') => {
    if (stopRequested) {
      // A terminal's Ctrl-C reaches this process both directly and relayed by npm and
      // scripts/run.mjs, so one keypress arrives several times.
      if (Date.now() - stopRequestedAt > 2000) fail(`${why} again: still stopping (each service gets its shutdown timeout, then SIGKILL)`);
      return;
    }
    stopRequested = why;
    stopRequestedAt = Date.now();
    // Nothing may keep this process (and what it started) alive for long once told to stop.
    setTimeout(() => {
      fail(`stopping took longer than ${STOP_DEADLINE_MS / 1000} s; killing what is left`);
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    // While starting, main() stops what was started once startStack settles.
    if (!stack) {
      say(`${why}: cancelling the start`);
      cancelStart.abort();
      return;
    }
    say(`${why}: stopping every service`);
    void stack.stop().then(() => {
      say('stopped');
      resolveExit(0);
    });
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, stop);
  const parent = Number(env.STACK_PARENT_PID);
  if (Number.isInteger(parent) && parent > 1) watchParent(parent, () => stop('parent exit'));

  const gatewayPort = parsePort(env.GATEWAY_PORT, 8080);
  const passed: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !NOT_PASSED.test(k)) passed[k] = v;
  const starting = startStack({
    dataDir: resolve(env.DATA_DIR || '.data'),
    databaseUrl: env.DATABASE_URL || undefined,
    natsUrl: env.NATS_URL || undefined,
    natsPrefix: env.NATS_PREFIX || '',
    s3: s3FromEnv(env),
    embedded: env.STACK_EMBEDDED === '1',
    gatewayPort,
    bindHost: env.BIND_HOST || '127.0.0.1',
    internalAuthSecret: env.INTERNAL_AUTH_SECRET || undefined,
    secretsKey: env.SECRETS_KEY || undefined,
    logLevel: env.LOG_LEVEL || 'info',
    env: passed,
    signal: cancelStart.signal,
    log: say,
  });
  let started: Stack;
  try {
    started = await starting;
  } catch (err) {
    if (stopRequested) {
      say('stopped');
      return 0;
    }
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
