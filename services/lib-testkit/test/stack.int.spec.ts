import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startStack, type Stack } from '../src/stack.js';
import { createServer } from 'node:net';
import { freePorts, portIsFree } from '../src/ports.js';
import type { ServiceSpec } from '../src/service.catalog.js';

// A stand-in service: serves /readyz (503 while FAKE_READY_AFTER_MS has not passed) and /env,
// exits with FAKE_EXIT_CODE after FAKE_EXIT_AFTER_MS, and logs a line at start.
const FAKE = `
const http = require('node:http');
const port = Number(process.env.GATEWAY_PORT ?? process.env.HTTP_PORT);
const t0 = Date.now();
const readyAfter = Number(process.env.FAKE_READY_AFTER_MS ?? 0);
http.createServer((req, res) => {
  if (req.url === '/readyz') { res.statusCode = Date.now() - t0 >= readyAfter ? 200 : 503; return res.end('{}'); }
  if (req.url === '/env') { res.setHeader('content-type', 'application/json'); return res.end(JSON.stringify({ pid: process.pid, env: process.env })); }
  res.statusCode = 404; res.end();
}).listen(port, '0.0.0.0', () => console.log(JSON.stringify({ msg: 'fake listening', port })));
if (process.env.FAKE_EXIT_AFTER_MS) setTimeout(() => { console.error('fake: exiting on purpose'); process.exit(Number(process.env.FAKE_EXIT_CODE ?? 1)); }, Number(process.env.FAKE_EXIT_AFTER_MS));
process.on('SIGTERM', () => { console.log('fake: SIGTERM, bye'); process.exit(0); });
`;

const SPECS: ServiceSpec[] = [
  { name: 'alpha', grpcPort: 1, httpPort: 1, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
  { name: 'beta', grpcPort: 1, httpPort: 1, httpPortEnv: 'HTTP_PORT', stage: 1, database: false, objectStore: true, passEnv: ['BETA_KNOB', 'BETA_UNSET'] },
  { name: 'front', httpPort: 1, httpPortEnv: 'GATEWAY_PORT', stage: 2, database: false },
  { name: 'never-built', grpcPort: 1, httpPort: 1, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
];

const S3 = { endpoint: 'http://127.0.0.1:1', accessKey: 'a', secretKey: 'b', bucket: 'bkt', region: 'us-east-1' };

async function envOf(stack: Stack, name: string): Promise<{ pid: number; env: Record<string, string> }> {
  const res = await fetch(`http://127.0.0.1:${stack.ports[name]!.http}/env`);
  return (await res.json()) as { pid: number; env: Record<string, string> };
}

describe('startStack with stand-in services', () => {
  let root: string;
  let stack: Stack | undefined;
  const lines: string[] = [];
  const base = () => ({
    root,
    dataDir: join(root, '.data'),
    logDir: join(root, 'logs'),
    databaseUrl: 'postgres://postgres@127.0.0.1:5432/fake',
    natsUrl: 'nats://127.0.0.1:4222',
    s3: S3,
    natsPrefix: 'pfx_',
    freePorts: true,
    services: SPECS,
    readyTimeoutMs: 10_000,
    log: (l: string) => lines.push(l),
  });

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'rb-stack-'));
    for (const name of ['alpha', 'beta', 'front']) {
      mkdirSync(join(root, 'services', name, 'dist'), { recursive: true });
      writeFileSync(join(root, 'services', name, 'dist', 'main.js'), FAKE);
    }
  });
  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('starts built services on free ports with their env and skips unbuilt ones with a warning', async () => {
    stack = await startStack({ ...base(), env: { COMMON: 'yes' }, serviceEnv: { alpha: { RECORDS_FAULT: 'x' } }, parentEnv: { BETA_KNOB: '7', OTHER: 'no' } });
    expect(stack.services).toEqual(['alpha', 'beta', 'front']);
    expect(lines.some((l) => l.startsWith('WARNING: never-built is not built'))).toBe(true);
    const ports = Object.values(stack.ports)
      .flatMap((p) => [p.grpc, p.http])
      .filter((p) => p !== undefined);
    expect(new Set(ports).size).toBe(5);
    expect(stack.url).toBe(`http://127.0.0.1:${stack.ports.front!.http}`);
    const alpha = await envOf(stack, 'alpha');
    expect(alpha.env).toMatchObject({
      HTTP_PORT: String(stack.ports.alpha!.http),
      GRPC_PORT: String(stack.ports.alpha!.grpc),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/fake',
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_PREFIX: 'pfx_',
      LOG_LEVEL: 'info',
      COMMON: 'yes',
      RECORDS_FAULT: 'x',
      BETA_ADDR: `127.0.0.1:${stack.ports.beta!.grpc}`,
    });
    const beta = await envOf(stack, 'beta');
    expect(beta.env.DATABASE_URL).toBeUndefined();
    expect(beta.env.RECORDS_FAULT).toBeUndefined();
    expect(beta.env.S3_ENDPOINT).toBe(S3.endpoint);
    // passEnv: only the listed variables that are set, only for that service.
    expect(beta.env.BETA_KNOB).toBe('7');
    expect(beta.env).not.toHaveProperty('BETA_UNSET');
    expect(beta.env).not.toHaveProperty('OTHER');
    expect(alpha.env).not.toHaveProperty('BETA_KNOB');
    const front = await envOf(stack, 'front');
    expect(front.env.GATEWAY_PORT).toBe(String(stack.ports.front!.http));
    expect(front.env.ALPHA_ADDR).toBe(`127.0.0.1:${stack.ports.alpha!.grpc}`);
    expect(readFileSync(stack.logFile('alpha')!, 'utf8')).toContain('fake listening');
  });

  it('kill() keeps a service down; restart() brings it back with the new env', async () => {
    stack = await startStack(base());
    const before = await envOf(stack, 'alpha');
    await stack.kill('alpha', 'SIGKILL');
    await new Promise((r) => setTimeout(r, 800));
    await expect(fetch(`http://127.0.0.1:${stack.ports.alpha!.http}/readyz`)).rejects.toThrow();
    await stack.restart('alpha', { EXTRA: '1' });
    const after = await envOf(stack, 'alpha');
    expect(after.pid).not.toBe(before.pid);
    expect(after.env.EXTRA).toBe('1');
    await stack.restart('alpha');
    expect((await envOf(stack, 'alpha')).env.EXTRA).toBeUndefined();
  });

  it('restarts a crashed service loudly, naming it, and the new process serves again', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      stack = await startStack(base());
      const before = await envOf(stack, 'beta');
      process.kill(before.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      await stack.waitReady('beta', 5000);
      const after = await envOf(stack, 'beta');
      expect(after.pid).not.toBe(before.pid);
      const text = stderr.mock.calls.map((c) => String(c[0])).join('');
      expect(text).toContain(`SERVICE CRASHED: beta (pid ${before.pid}) was killed by SIGKILL`);
      expect(text).toContain('restarting in 250 ms (crash 1 of 5');
      expect(text).toContain('fake listening');
    } finally {
      stderr.mockRestore();
    }
  });

  it('gives up on a crash loop and stops the whole stack', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      stack = await startStack(base());
      const frontPort = stack.ports.front!.http;
      // It may or may not answer /readyz in the 50 ms it lives; the give-up is what counts.
      await stack.restart('alpha', { FAKE_EXIT_AFTER_MS: '50' }).catch(() => undefined);
      const err = await stack.fatal;
      expect(err.message).toMatch(/alpha crashed 5 times within 60 s/);
      expect(await portIsFree(frontPort)).toBe(true);
      expect(String(stderr.mock.calls.map((c) => c[0]).join(''))).toContain('giving up');
    } finally {
      stderr.mockRestore();
    }
  }, 30_000);

  it('fails the start with the service name and its last lines when it is never ready', async () => {
    await expect(startStack({ ...base(), readyTimeoutMs: 1500, serviceEnv: { beta: { FAKE_READY_AFTER_MS: '60000' } } })).rejects.toThrow(
      /beta was not ready within 2 s \(GET http:\/\/127\.0\.0\.1:\d+\/readyz → 503\)\nbeta's last log lines:\n.*fake listening/,
    );
  });

  it('gives every service a free internal port, loopback and one shared secret, even on default ports', async () => {
    const { freePorts: _free, ...defaults } = base();
    const gatewayPort = (await freePorts(1))[0]!;
    stack = await startStack({ ...defaults, gatewayPort });
    expect(stack.ports.front!.http).toBe(gatewayPort);
    const alpha = await envOf(stack, 'alpha');
    const front = await envOf(stack, 'front');
    // The gateway-like service gets an ops port of its own (HTTP_PORT), picked like the others.
    expect(front.env.HTTP_PORT).toBe(String(stack.ports.front!.ops));
    expect(stack.ports.front!.ops).not.toBe(gatewayPort);
    for (const env of [alpha.env, front.env]) {
      expect(env.BIND_HOST).toBe('127.0.0.1');
      expect(env.INTERNAL_AUTH_SECRET).toBe(stack.internalAuthSecret);
    }
    expect(Buffer.byteLength(stack.internalAuthSecret)).toBeGreaterThanOrEqual(32);
    expect(alpha.env.GRPC_PORT).not.toBe('1');
    expect(alpha.env.HTTP_PORT).not.toBe('1');
  });

  it('gives every service one SECRETS_KEY, made once and kept in the data directory (0600) across restarts', async () => {
    const dataDir = join(root, 'keyed-data');
    stack = await startStack({ ...base(), dataDir });
    const first = (await envOf(stack, 'alpha')).env.SECRETS_KEY!;
    expect(stack.secretsKey).toBe(first);
    expect(Buffer.from(first, 'base64')).toHaveLength(32);
    expect((await envOf(stack, 'front')).env.SECRETS_KEY).toBe(first);
    const file = join(dataDir, 'secrets.key');
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await stack.stop();
    stack = await startStack({ ...base(), dataDir });
    expect((await envOf(stack, 'beta')).env.SECRETS_KEY).toBe(first);
    await stack.stop();
    // One given explicitly wins; another data directory gets its own.
    const given = Buffer.alloc(32, 9).toString('base64');
    stack = await startStack({ ...base(), dataDir, env: { SECRETS_KEY: given } });
    expect((await envOf(stack, 'alpha')).env.SECRETS_KEY).toBe(given);
    await stack.stop();
    stack = await startStack({ ...base(), dataDir: join(root, 'other-data') });
    expect((await envOf(stack, 'alpha')).env.SECRETS_KEY).not.toBe(first);
    await stack.stop();
    writeFileSync(file, 'garbage');
    await expect(startStack({ ...base(), dataDir })).rejects.toThrow(/does not hold a SECRETS_KEY/);
    stack = undefined;
  });

  it('refuses a taken gateway port before starting anything, naming the port and the variable', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '0.0.0.0', () => r()));
    const port = (blocker.address() as { port: number }).port;
    lines.length = 0;
    try {
      await expect(startStack({ ...base(), gatewayPort: port })).rejects.toThrow(
        `port ${port} (GATEWAY_PORT) is already in use on this machine; stop what listens there or set GATEWAY_PORT to a free port`,
      );
      expect(lines.filter((l) => l.startsWith('starting'))).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('stops what it started when the start is cancelled', async () => {
    const cancel = new AbortController();
    const starting = startStack({ ...base(), signal: cancel.signal, serviceEnv: { alpha: { FAKE_READY_AFTER_MS: '60000' } } });
    await new Promise((r) => setTimeout(r, 800));
    cancel.abort();
    await expect(starting).rejects.toThrow('the start was cancelled');
  });

  it('leaves no service behind when the stack process itself is killed outright', async () => {
    // A stack in a process of its own (as `npm start` runs it), killed with SIGKILL: no exit hook runs.
    const stackJs = new URL('../dist/stack.js', import.meta.url).href;
    const script = `
      import { startStack } from ${JSON.stringify(stackJs)};
      const stack = await startStack({ ...${JSON.stringify({ ...base(), log: undefined, services: SPECS.slice(0, 3) })}, log: () => {} });
      console.log(JSON.stringify(stack.services.map((n) => stack.pid(n))));
      setInterval(() => {}, 1000);
    `;
    const proc = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      proc.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.startsWith('['));
        if (line) resolve(JSON.parse(line) as number[]);
      });
      proc.once('exit', (code) => reject(new Error(`the stack process exited with ${code}: ${out}`)));
    });
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      expect(pids).toHaveLength(3);
      expect(pids.every(alive)).toBe(true);
    } finally {
      proc.kill('SIGKILL');
    }
    await expect.poll(() => pids.filter(alive), { timeout: 5000, interval: 100 }).toEqual([]);
  });

  it('fails at once when a service exits with the configuration status 78', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const t0 = Date.now();
      await expect(
        startStack({ ...base(), serviceEnv: { alpha: { FAKE_EXIT_AFTER_MS: '1', FAKE_EXIT_CODE: '78', FAKE_READY_AFTER_MS: '60000' } } }),
      ).rejects.toThrow(/alpha is down: exited with status 78 \(configuration error/);
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      stderr.mockRestore();
    }
  });
});
