/**
 * A local `nats-server` with JetStream as a child process, for machines without one running:
 * found on PATH, installed with apt-get when running as root on a machine that has it, else a
 * clear error saying what to install or set.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stopLeftover } from './leftover.js';
import { natsAnswers } from './nats.js';
import { freePort, sleep } from './ports.js';

export interface NatsServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Path of `nats-server` on PATH, or null. */
export function findNatsServer(): string | null {
  const r = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  const path = r.stdout?.trim();
  return r.status === 0 && path ? path : null;
}

/** Finds `nats-server`, installing it with apt-get when running as root; throws a how-to otherwise. */
export function ensureNatsServer(log: (line: string) => void): string {
  const found = findNatsServer();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'NATS is not running at nats://127.0.0.1:4222 and nats-server is not installed. Install it ' +
        '(Debian/Ubuntu: `sudo apt-get install -y nats-server`; elsewhere https://nats.io/download/), ' +
        'or set NATS_URL to a NATS server with JetStream enabled.',
    );
  }
  const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!hasApt) {
    throw new Error(
      'NATS is not running at nats://127.0.0.1:4222 and nats-server is not installed, and this machine has no apt-get ' +
        'to install it with. Install nats-server 2.10 or newer (https://nats.io/download/, a single binary; put it on PATH), ' +
        'or set NATS_URL to a NATS server with JetStream enabled.',
    );
  }
  log('nats: nats-server not found; installing it with apt-get (Debian package nats-server)');
  const r = spawnSync('sh', ['-c', 'apt-get update && apt-get install -y nats-server'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const path = r.status === 0 ? findNatsServer() : null;
  if (!path)
    throw new Error('installing nats-server with apt-get failed (see the lines above); install it by hand (https://nats.io/download/) or set NATS_URL');
  return path;
}

/**
 * Starts `nats-server -js` with its store under `<dataDir>/nats`; resolves once it answers.
 * `port`: listen there (a restart on the port the services know); default a free one.
 */
export async function startNatsServer(dataDir: string, log: (line: string) => void, port?: number): Promise<NatsServerProcess> {
  const bin = ensureNatsServer(log);
  const dir = resolve(join(dataDir, 'nats'));
  mkdirSync(dir, { recursive: true });
  port ??= await freePort('127.0.0.1');
  const url = `nats://127.0.0.1:${port}`;
  const out = createWriteStream(join(dir, 'nats-server.log'), { flags: 'a' });
  const pidFile = join(dir, 'nats-server.pid');
  const left = await stopLeftover(pidFile, dir, ['SIGTERM', 'SIGKILL'], 5000);
  if (left) log(`nats: stopped a nats-server an earlier run left running on ${dir} (pid ${left})`);
  const child = spawn(bin, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, '-P', pidFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout?.pipe(out, { end: false });
  child.stderr?.pipe(out, { end: false });
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const deadline = Date.now() + 15_000;
  while (!(await natsAnswers(url, 500))) {
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server ${exited ?? 'did not answer within 15 s'}; see ${join(dir, 'nats-server.log')}`);
    }
    await sleep(100);
  }
  return {
    url,
    port,
    child,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
      out.end();
    },
  };
}
