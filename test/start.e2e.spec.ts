/**
 * `npm start` end to end: the stack CLI as its own process (as scripts/tasks.mjs runs it),
 * on a throwaway database and NATS prefix, answers /readyz and /healthz, and a SIGTERM stops
 * everything with status 0, freeing every port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const CLI = join(REPO_ROOT, 'services', 'lib-testkit', 'dist', 'stack.cli.js');

interface Cli {
  child: ChildProcess;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function runCli(env: Record<string, string>): Cli {
  let out = '';
  const child = spawn(process.execPath, [CLI], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => out, exit };
}

describe('the stack CLI behind npm start', () => {
  let db: TestDatabase;
  let dataDir: string;
  let prefix: string;
  const natsUrl = process.env.TEST_NATS_URL ?? DEFAULT_NATS_URL;

  beforeAll(async () => {
    db = await createTestDatabase(undefined, 'rb_e2e_cli');
    dataDir = mkdtempSync(join(tmpdir(), 'rb-cli-'));
    chmodSync(dataDir, 0o755);
    prefix = uniquePrefix('e2ecli');
  });
  afterAll(async () => {
    await db?.drop().catch(() => undefined);
    await deleteStreams(prefix, natsUrl).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts every service, answers /readyz and /healthz, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const cli = runCli({
      GATEWAY_PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: db.url,
      NATS_URL: natsUrl,
      NATS_PREFIX: prefix,
      STACK_FREE_PORTS: '1',
      PASSWORD_SCRYPT_COST: '1024',
      LOG_LEVEL: 'warn',
    });
    let exited = false;
    void cli.exit.then(() => (exited = true));
    try {
      await eventually(
        async () => {
          if (exited) throw new Error(`the CLI exited early:\n${cli.output()}`);
          return cli.output().includes(`reelbase is up: http://localhost:${port}`) ? true : undefined;
        },
        120_000,
        'the "reelbase is up" line',
      );
      const out = cli.output();
      expect(out).toContain(`http://localhost:${port}/readyz`);
      for (const name of ['auth', 'records', 'events', 'gateway']) expect(out).toMatch(new RegExp(`starting ${name} \\(`));
      expect(out).toContain(`postgres: using DATABASE_URL ${db.url}`);
      expect(out).toContain(`nats: using NATS_URL ${natsUrl}`);
      expect(out).toMatch(/s3: started the local S3 stand-in on http:\/\/127\.0\.0\.1:\d+/);

      const api = new Api(`http://127.0.0.1:${port}`);
      expect((await api.get('/readyz')).status).toBe(200);
      expect(expectStatus(await api.get('/healthz'), 200)).toEqual({ status: 'ok' });
      // The stack is usable, really on this database and under this NATS prefix.
      expectStatus(await api.post('/auth/register', { email: 'cli@studio.test', password: 'password-1234', name: 'Cli' }), 200, 'register');
      expect(await streamNames(prefix, natsUrl)).toContain(`${prefix}EVENTS`);

      const ports = [port, ...[...out.matchAll(/(?:gRPC|ops) :(\d+)/g)].map((m) => Number(m[1]))];
      expect(ports.length).toBe(1 + 6);

      const t0 = Date.now();
      cli.child.kill('SIGTERM');
      const result = await Promise.race([cli.exit, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
      const took = Date.now() - t0;
      expect(result, `the CLI did not exit within 20 s after SIGTERM:\n${cli.output().slice(-3000)}`).toEqual({ code: 0, signal: null });
      expect(took).toBeLessThan(15_000);
      expect(cli.output()).toContain('[stack] stopped');
      for (const p of ports) expect(await portIsFree(p), `port ${p} is still taken`).toBe(true);
    } finally {
      if (!exited) cli.child.kill('SIGKILL');
    }
  });

  it('exits non-zero with the reason when the stack cannot start', async () => {
    const cli = runCli({ GATEWAY_PORT: 'eighty', DATA_DIR: dataDir, DATABASE_URL: db.url, NATS_URL: natsUrl, NATS_PREFIX: prefix });
    const result = await Promise.race([cli.exit, new Promise<null>((r) => setTimeout(() => r(null), 20_000))]);
    expect(result).toEqual({ code: 1, signal: null });
    expect(cli.output()).toContain('reelbase could not start: GATEWAY_PORT must be a port number');
  });
});
