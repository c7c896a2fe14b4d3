/**
 * `npm start` end to end, run the way a newcomer runs it: `npm start` in the repository, in
 * its own process group as a terminal runs a foreground job, on a throwaway database and NATS
 * prefix (or the embedded PostgreSQL and a nats-server child).
 *
 * Each way of stopping it — `kill -TERM <npm>`, `kill -INT <npm>`, and a terminal's Ctrl-C
 * (SIGINT to the whole process group) — stops every service in order (gateway first, the
 * databases last), prints `[stack] stopped`, exits 0 and leaves no process behind: every
 * process whose command line or environment names this run's DATA_DIR or NATS prefix is gone.
 * An npm process killed outright (SIGKILL) leaves nothing behind either.
 * Internal ports are free ones (ports others commonly hold do not matter), bound to loopback,
 * and a gRPC call with a forged principal is refused.
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, connect, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InternalAuth, toMetadata, type CallContext } from '@reelbase/lib-platform';
import {
  createTestDatabase,
  DEFAULT_NATS_URL,
  deleteStreams,
  freePort,
  portIsFree,
  REPO_ROOT,
  streamNames,
  uniquePrefix,
  type TestDatabase,
} from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, eventually, expectStatus } from './support/api.client.js';

interface Run {
  child: ChildProcess;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: () => boolean;
}

/** `npm start` with `env` on top of a bare environment, as the leader of its own process group. */
function npmStart(env: Record<string, string>): Run {
  let out = '';
  let done = false;
  const child = spawn('npm', ['start'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return { child, output: () => out, exit, exited: () => done };
}

async function waitUp(run: Run, port: number, timeoutMs = 150_000): Promise<void> {
  await eventually(
    async () => {
      if (run.exited()) throw new Error(`npm start exited early:\n${run.output()}`);
      return run.output().includes(`reelbase is up: http://localhost:${port}`) ? true : undefined;
    },
    timeoutMs,
    'the "reelbase is up" line',
  );
}

/** Waits for the exit; null when it takes longer than `ms`. */
async function exitWithin(run: Run, ms: number) {
  return Promise.race([run.exit, new Promise<null>((r) => setTimeout(() => r(null), ms))]);
}

/** Every process (pid and command) whose command line contains, or whose environment has, one of `needles`. */
function processesWith(needles: { inCmdline?: string[]; envEntries?: string[] }): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    let cmdline: string;
    let environ: string[];
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (!cmdline) continue; // a zombie waiting to be reaped
    if (needles.inCmdline?.some((n) => cmdline.includes(n)) || needles.envEntries?.some((e) => environ.includes(e))) {
      found.push(`${pid} ${cmdline}`);
    }
  }
  return found;
}

/** Ports the stack logged as internal (gRPC and ops ports of every service). */
function internalPorts(output: string): Record<string, { grpc?: number; ops: number }> {
  const ports: Record<string, { grpc?: number; ops: number }> = {};
  for (const m of output.matchAll(/starting (\w+) \((?:gRPC :(\d+), )?(?:HTTP :\d+, )?ops :(\d+)\)/g)) {
    ports[m[1]!] = { ...(m[2] ? { grpc: Number(m[2]) } : {}), ops: Number(m[3]) };
  }
  return ports;
}

function listen(port: number, host = '0.0.0.0'): Promise<Server | null> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(null));
    s.listen({ port, host }, () => resolve(s));
  });
}

/** Resolves true when a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host, port, timeout: 2000 });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
    sock.once('timeout', () => {
      sock.destroy();
      resolve(false);
    });
  });
}

type Metadata = ReturnType<typeof toMetadata>;
type Callback = (err: { code: number } | null) => void;
interface RawRecordsClient {
  createRecord(req: { entityType: string; dataJson: string }, md: Metadata, opts: { deadline: number }, cb: Callback): unknown;
  close(): void;
}

/** grpc-js and the generated records client, loaded as the services load them (this package does not depend on them). */
async function grpcModules() {
  const req = createRequire(join(REPO_ROOT, 'services', 'lib-platform', 'package.json'));
  const grpc = req('@grpc/grpc-js') as { credentials: { createInsecure(): unknown }; status: { UNAUTHENTICATED: number } };
  const proto = (await import(pathToFileURL(req.resolve('@reelbase/proto')).href)) as {
    recordsv1: {
      RecordsServiceClient: new (address: string, creds: unknown) => RawRecordsClient;
      CreateRecordRequest: { encode(req: { entityType: string; dataJson: string }): { finish(): Uint8Array } };
    };
  };
  return { grpc, proto };
}

describe('npm start', () => {
  let db: TestDatabase;
  let prefix: string;
  const dirs: string[] = [];
  const prefixes: string[] = [];
  const runs: Run[] = [];
  const natsUrl = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL;

  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'rb-start-'));
    // The embedded PostgreSQL runs as the `postgres` user when the tests run as root.
    chmodSync(d, 0o755);
    dirs.push(d);
    return d;
  };
  const newPrefix = () => {
    const p = uniquePrefix('e2estart');
    prefixes.push(p);
    return p;
  };
  // The runs on the shared database (and so the secrets stored in it) each have a data folder of their
  // own: they share the SECRETS_KEY, as restarts of one installation do. The others keep theirs in DATA_DIR.
  const secretsKey = randomBytes(32).toString('base64');
  const start = (env: Record<string, string>) => {
    const run = npmStart(env.DATABASE_URL ? { SECRETS_KEY: secretsKey, ...env } : env);
    runs.push(run);
    return run;
  };
  /** What a run may leave behind: processes naming its data folder or its NATS prefix. */
  const leftovers = (dir: string, pfx: string) => processesWith({ inCmdline: [dir], envEntries: [`DATA_DIR=${dir}`, `NATS_PREFIX=${pfx}`] });

  beforeAll(async () => {
    db = await createTestDatabase(undefined, 'rb_e2e_start');
    prefix = newPrefix();
  });
  afterAll(async () => {
    for (const r of runs) if (!r.exited()) process.kill(-r.child.pid!, 'SIGKILL');
    await db?.drop().catch(() => undefined);
    for (const p of prefixes) await deleteStreams(p, natsUrl).catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('starts on free internal ports bound to loopback, passes every variable on, refuses a forged principal, and stops on SIGTERM', async () => {
    // Ports a newcomer's machine often has taken (node_exporter on 9100) and the deployment defaults.
    const held = (await Promise.all([9100, 9101, 9102, 9103, 9104, 50051, 50052, 50053, 50054].map((p) => listen(p)))).filter((s): s is Server => s !== null);
    const port = await freePort();
    const dir = dataDir();
    const secret = 'e2e-start-internal-auth-secret-0123456789abcdef';
    const run = start({
      GATEWAY_PORT: String(port),
      DATA_DIR: dir,
      DATABASE_URL: db.url,
      NATS_URL: natsUrl,
      NATS_PREFIX: prefix,
      INTERNAL_AUTH_SECRET: secret,
      PASSWORD_SCRYPT_COST: '1024',
      BODY_LIMIT_BYTES: '2048',
      LOG_LEVEL: 'warn',
    });
    try {
      await waitUp(run, port);
      const out = run.output();
      expect(out).toContain(`http://localhost:${port}/readyz`);
      expect(out).toContain(`postgres: using DATABASE_URL ${db.url}`);
      expect(out).toContain(`nats: using NATS_URL ${natsUrl}`);
      expect(out).toMatch(/s3: started the local S3 stand-in on http:\/\/127\.0\.0\.1:\d+/);
      const ports = internalPorts(out);
      expect(Object.keys(ports).sort()).toEqual(['auth', 'events', 'gateway', 'notifier', 'records', 'schema']);
      const internal = Object.values(ports).flatMap((p) => (p.grpc ? [p.grpc, p.ops] : [p.ops]));
      expect(internal).toHaveLength(11);
      for (const p of [9100, 9101, 9102, 9103, 9104, 9106, 9107, 50051, 50052, 50053, 50054, 50056]) expect(internal).not.toContain(p);

      const api = new Api(`http://127.0.0.1:${port}`);
      expect(expectStatus(await api.get('/healthz'), 200)).toEqual({ status: 'ok' });
      expectStatus(await api.post('/auth/register', { email: 'cli@studio.test', password: 'password-1234', name: 'Cli' }), 200, 'register');
      expect(await streamNames(prefix, natsUrl)).toContain(`${prefix}EVENTS`);
      // BODY_LIMIT_BYTES, set before `npm start`, reached the gateway.
      const big = await api.post('/auth/login', { email: 'cli@studio.test', password: 'x'.repeat(4000) });
      expect(big.status).toBe(413);

      // Internal ports answer on loopback only.
      const lan = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
      expect(await accepts('127.0.0.1', ports.records!.grpc!)).toBe(true);
      if (lan) {
        expect(await accepts(lan, ports.records!.grpc!), `records gRPC reachable on ${lan}`).toBe(false);
        expect(await accepts(lan, ports.gateway!.ops), `gateway ops reachable on ${lan}`).toBe(false);
      }

      // A caller claiming to be an Admin without proving it is one of ours is refused.
      const { grpc, proto } = await grpcModules();
      const records = new proto.recordsv1.RecordsServiceClient(`127.0.0.1:${ports.records!.grpc}`, grpc.credentials.createInsecure());
      const path = '/reelbase.records.v1.RecordsService/CreateRecord';
      const admin: CallContext = { requestId: 'e2e-forged', principal: { userId: '', role: 'Admin', authKind: 'token' } };
      const projectOf = (code: string) => ({ entityType: 'Project', dataJson: JSON.stringify({ name: code, code }) });
      const bytesOf = (code: string) => proto.recordsv1.CreateRecordRequest.encode(projectOf(code)).finish();
      const create = (md: Metadata, code: string) =>
        new Promise<{ code: number } | null>((resolve) => records.createRecord(projectOf(code), md, { deadline: Date.now() + 5000 }, (err) => resolve(err)));
      try {
        const forged = toMetadata(admin);
        expect((await create(forged, 'forged'))?.code).toBe(grpc.status.UNAUTHENTICATED);
        const otherKey = toMetadata(admin);
        new InternalAuth('x'.repeat(48)).sign(otherKey, path, bytesOf('forged2'));
        expect((await create(otherKey, 'forged2'))?.code).toBe(grpc.status.UNAUTHENTICATED);
        const signed = toMetadata(admin);
        new InternalAuth(secret).sign(signed, path, bytesOf('signed'));
        expect(await create(signed, 'signed')).toBeNull();
        // Replayed, or with another body: refused.
        expect((await create(signed, 'signed'))?.code).toBe(grpc.status.UNAUTHENTICATED);
        expect((await create(signed, 'forged3'))?.code).toBe(grpc.status.UNAUTHENTICATED);
      } finally {
        records.close();
      }

      const running = leftovers(dir, prefix);
      expect(running.length, running.join('\n')).toBeGreaterThanOrEqual(8); // npm, run.mjs twice, the stack, four services

      const t0 = Date.now();
      process.kill(run.child.pid!, 'SIGTERM');
      const result = await exitWithin(run, 20_000);
      expect(result, `npm start did not exit within 20 s after SIGTERM:\n${run.output().slice(-3000)}`).toEqual({ code: 0, signal: null });
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(run.output()).toContain('[stack] SIGTERM: stopping every service');
      expect(run.output()).toContain('[stack] stopped');
      expect(leftovers(dir, prefix)).toEqual([]);
      for (const p of [port, ...internal]) expect(await portIsFree(p), `port ${p} is still taken`).toBe(true);
    } finally {
      for (const s of held) s.close();
    }
  });

  it('stops everything on SIGINT to the npm process', async () => {
    const port = await freePort();
    const dir = dataDir();
    const pfx = newPrefix();
    const run = start({ GATEWAY_PORT: String(port), DATA_DIR: dir, DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: pfx, LOG_LEVEL: 'warn' });
    await waitUp(run, port);
    expect(leftovers(dir, pfx).length).toBeGreaterThanOrEqual(8);
    const t0 = Date.now();
    process.kill(run.child.pid!, 'SIGINT');
    const result = await exitWithin(run, 20_000);
    expect(result, `npm start did not exit within 20 s after SIGINT:\n${run.output().slice(-3000)}`).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(run.output()).toContain('[stack] SIGINT: stopping every service');
    expect(run.output()).toContain('[stack] stopped');
    expect(leftovers(dir, pfx)).toEqual([]);
    expect(await portIsFree(port)).toBe(true);
  });

  it('stops in order on a Ctrl-C (SIGINT to the process group), embedded PostgreSQL and nats-server last', async () => {
    const port = await freePort();
    const dir = dataDir();
    const pfx = newPrefix();
    const run = start({ GATEWAY_PORT: String(port), DATA_DIR: dir, STACK_EMBEDDED: '1', NATS_PREFIX: pfx, LOG_LEVEL: 'warn' });
    await waitUp(run, port);
    const out = run.output();
    expect(out).toMatch(/postgres: STACK_EMBEDDED=1; started an embedded one on port \d+/);
    expect(out).toMatch(/nats: STACK_EMBEDDED=1; started nats-server -js/);
    const running = leftovers(dir, pfx);
    expect(
      running.filter((p) => / -D \S*\/pg /.test(p) || p.includes('nats-server')),
      running.join('\n'),
    ).toHaveLength(2);
    expect(running.length).toBeGreaterThanOrEqual(10);

    const before = run.output().length;
    const t0 = Date.now();
    process.kill(-run.child.pid!, 'SIGINT');
    const result = await exitWithin(run, 20_000);
    expect(result, `npm start did not exit within 20 s after Ctrl-C:\n${run.output().slice(-3000)}`).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(10_000);
    const after = run.output().slice(before);
    expect(after).toContain('[stack] stopped');
    // The gateway stops first, every service before the databases, and none of them died of it.
    const exits = [...after.matchAll(/^(\w+)\s+\| ---- \S+ \w+ \(pid \d+\) (.*) ----$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(exits[0]).toBe('gateway exited with status 0');
    expect(exits.slice(1).sort()).toEqual([
      'auth exited with status 0',
      'events exited with status 0',
      'notifier exited with status 0',
      'records exited with status 0',
      'schema exited with status 0',
    ]);
    expect(after).not.toMatch(/SERVICE CRASHED|"level":"(error|fatal)"/);
    expect(leftovers(dir, pfx)).toEqual([]);
  });

  it('stops everything when the npm process is killed outright (SIGKILL, no signal to pass on)', async () => {
    const port = await freePort();
    const dir = dataDir();
    const pfx = newPrefix();
    const run = start({ GATEWAY_PORT: String(port), DATA_DIR: dir, DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: pfx, LOG_LEVEL: 'warn' });
    await waitUp(run, port);
    expect(leftovers(dir, pfx).length).toBeGreaterThanOrEqual(8);
    process.kill(run.child.pid!, 'SIGKILL');
    await run.exit;
    // scripts/run.mjs notices its parent is gone and stops the stack as on SIGTERM.
    const remaining = await eventually(async () => (leftovers(dir, pfx).length === 0 ? [] : undefined), 15_000, 'every process gone').catch(() =>
      leftovers(dir, pfx),
    );
    expect(remaining).toEqual([]);
    expect(run.output()).toContain('[stack] SIGTERM: stopping every service');
    expect(run.output()).toContain('[stack] stopped');
    expect(await portIsFree(port)).toBe(true);
  });

  it('names a taken GATEWAY_PORT in one line and starts nothing', async () => {
    const taken = (await listen(await freePort()))!;
    const port = (taken.address() as { port: number }).port;
    const dir = dataDir();
    const pfx = newPrefix();
    try {
      const run = start({ GATEWAY_PORT: String(port), DATA_DIR: dir, DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: pfx });
      const result = await exitWithin(run, 60_000);
      expect(result, run.output()).toEqual({ code: 1, signal: null });
      const lines = run
        .output()
        .split('\n')
        .filter((l) => l.includes(String(port)));
      expect(lines).toEqual([
        `[stack] reelbase could not start: port ${port} (GATEWAY_PORT) is already in use on this machine; stop what listens there or set GATEWAY_PORT to a free port`,
      ]);
      expect(run.output()).not.toMatch(/starting \w+|postgres:|nats:|s3:/);
      expect(leftovers(dir, pfx)).toEqual([]);
    } finally {
      taken.close();
    }
  });

  it('exits non-zero with the reason when the settings are wrong', async () => {
    const run = start({ GATEWAY_PORT: 'eighty', DATA_DIR: dataDir(), DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: newPrefix() });
    const result = await exitWithin(run, 60_000);
    expect(result).toEqual({ code: 1, signal: null });
    expect(run.output()).toContain('reelbase could not start: GATEWAY_PORT must be a port number');
  });
});
