/**
 * Every service's built `dist/main.js` as the process the stack or a pod runs: it starts and
 * stops through the shared lifecycle (lib-platform `runService`), and a start whose
 * dependency is unreachable logs one fatal line and exits non-zero instead of hanging or
 * crashing with a bare stack trace.
 */
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../src/database.js';
import { DEFAULT_NATS_URL, deleteStreams, uniquePrefix } from '../src/nats.js';
import { freePort } from '../src/ports.js';
import { TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY } from '../src/secrets.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const NATS_URL = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL;
const SERVICES = ['auth', 'records', 'events', 'schema', 'gateway'] as const;
type Name = (typeof SERVICES)[number];

interface LogLine {
  level?: string;
  msg?: string;
  err?: { message?: string };
  grpcPort?: number;
  httpPort?: number;
}

interface Child {
  lines: LogLine[];
  stderr: string[];
  /** Resolves with the exit code (or signal) and how long the process lived. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  waitFor(msg: string, timeoutMs: number): Promise<LogLine>;
  kill(signal: NodeJS.Signals): void;
}

const children: Child[] = [];

function run(name: Name, env: Record<string, string>): Child {
  const started = Date.now();
  const proc = spawn(process.execPath, [`${ROOT}services/${name}/dist/main.js`], {
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'info',
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      GATEWAY_PORT: '0',
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const stderr: string[] = [];
  const waiters: { msg: string; resolve: (l: LogLine) => void }[] = [];
  let buf = '';
  proc.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        stderr.push(text);
        continue;
      }
      lines.push(line);
      for (const w of waiters.filter((x) => x.msg === line.msg)) w.resolve(line);
    }
  });
  proc.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - started })),
  );
  const child: Child = {
    lines,
    stderr,
    exited,
    waitFor: (msg, timeoutMs) => {
      const seen = lines.find((l) => l.msg === msg);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: no "${msg}" within ${timeoutMs} ms:\n${JSON.stringify(lines)}\n${stderr.join('')}`)),
          timeoutMs,
        );
        waiters.push({ msg, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then((how) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited (${JSON.stringify(how)}) before "${msg}":\n${JSON.stringify(lines)}\n${stderr.join('')}`));
        });
      });
    },
    kill: (signal) => proc.kill(signal),
  };
  children.push(child);
  return child;
}

let db: TestDatabase;
let prefix: string;

beforeAll(async () => {
  execFileSync(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, '-b', ...SERVICES.map((s) => `services/${s}`)], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  db = await createTestDatabase();
  prefix = uniquePrefix('main');
}, 180_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await deleteStreams(prefix, NATS_URL).catch(() => {});
  await db?.drop();
});

/** What each service needs to start for real. */
function workingEnv(name: Name): Record<string, string> {
  const env: Record<string, string> = { NATS_URL, NATS_PREFIX: prefix };
  if (name !== 'gateway') env.DATABASE_URL = db.url;
  if (name === 'auth') env.PASSWORD_SCRYPT_COST = '1024';
  return env;
}

describe.each(SERVICES)('%s main.js', (name) => {
  it('starts through the shared lifecycle and stops on SIGTERM with exit 0', async () => {
    const child = run(name, workingEnv(name));
    const started = await child.waitFor(`${name} started`, 20_000);
    expect(started.level).toBe('info');
    expect(started.httpPort).toBeGreaterThan(0);
    if (name !== 'gateway') expect(started.grpcPort).toBeGreaterThan(0);
    child.kill('SIGTERM');
    const how = await child.exited;
    expect(how.code, JSON.stringify(child.lines)).toBe(0);
    expect(child.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', `${name} stopped`]));
  }, 30_000);

  it('exits non-zero with one fatal line when its first dependency is unreachable', async () => {
    const closed = await freePort('127.0.0.1');
    // The gateway's first dependency is NATS (gRPC peers connect lazily); the others' is PostgreSQL.
    const env: Record<string, string> =
      name === 'gateway'
        ? { NATS_URL: `nats://127.0.0.1:${closed}` }
        : { ...workingEnv(name), DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/reelbase` };
    const child = run(name, env);
    const how = await child.exited;
    expect(how.code, JSON.stringify(child.lines) + child.stderr.join('')).toBe(1);
    expect(how.ms).toBeLessThan(10_000);
    const fatal = child.lines.filter((l) => l.level === 'fatal');
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toBe(`${name} failed to start`);
    expect(fatal[0]!.err?.message).toMatch(/ECONNREFUSED|CONNECTION_REFUSED|connect/i);
    expect(child.lines.some((l) => l.msg === `${name} started`)).toBe(false);
    // No bare stack trace on stderr: the failure is the fatal log line.
    expect(child.stderr.join('')).toBe('');
  }, 15_000);

  it('exits 78 naming every invalid setting before it opens anything', async () => {
    const child = run(name, { ...workingEnv(name), LOG_LEVEL: 'loud', SHUTDOWN_TIMEOUT_MS: 'soon' });
    const how = await child.exited;
    expect(how.code).toBe(78);
    const fatal = child.stderr.join('');
    expect(fatal).toContain('invalid configuration');
    expect(fatal).toContain('LOG_LEVEL');
    expect(fatal).toContain('SHUTDOWN_TIMEOUT_MS');
  }, 15_000);
});
