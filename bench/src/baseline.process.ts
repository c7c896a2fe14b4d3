/**
 * Starts the baseline (baseline.main.ts) as a child process and stops it by its pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** A running baseline process. */
export interface BaselineProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Spawns the baseline on an ephemeral port and resolves once it listens; `main` names another
 * baseline entry point beside this file (the farm's, farm.baseline.main.js) and `env` adds to its environment.
 */
export async function startBaselineProcess(opts: {
  databaseUrl: string;
  poolSize: number;
  schema: string;
  actor: string | null;
  main?: string;
  env?: Record<string, string>;
}): Promise<BaselineProcess> {
  const main = fileURLToPath(new URL(`./${opts.main ?? 'baseline.main.js'}`, import.meta.url));
  const child = spawn(process.execPath, [main], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      PORT: '0',
      POOL_SIZE: String(opts.poolSize),
      TABLE_SCHEMA: opts.schema,
      ACTOR_ID: opts.actor ?? '',
      ...opts.env,
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('baseline did not start within 15 s')), 15_000);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { listening?: number };
        if (typeof msg.listening === 'number') {
          clearTimeout(timer);
          resolve(msg.listening);
        }
      } catch {
        // not our readiness line
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`baseline exited before listening (${code ?? signal})`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async stop() {
      const done = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(timer);
    },
  };
}
