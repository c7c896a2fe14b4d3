/**
 * Runs the built service (`services/records/dist/main.js`) as a child process, so a fault
 * switch can really kill it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const MAIN_JS = fileURLToPath(new URL('../dist/main.js', import.meta.url));

export interface Child {
  proc: ChildProcess;
  grpcPort: number;
  /** Resolves with the signal (or exit code) once the process is gone. */
  exited: Promise<NodeJS.Signals | number | null>;
  /** Every log line so far (for failure messages). */
  lines: string[];
}

/** Starts the service with `env` and waits for its "records started" line. */
export async function startChild(env: Record<string, string>, timeoutMs = 20_000): Promise<Child> {
  const proc = spawn(process.execPath, [MAIN_JS], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));
  createInterface({ input: proc.stderr! }).on('line', (l) => lines.push(l));
  const grpcPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not start:\n${lines.join('\n')}`)), timeoutMs);
    createInterface({ input: proc.stdout! }).on('line', (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; grpcPort?: number };
        if (entry.msg === 'records started' && entry.grpcPort) {
          clearTimeout(timer);
          resolve(entry.grpcPort);
        }
      } catch {
        // Not a log line.
      }
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${how}) before starting:\n${lines.join('\n')}`));
    });
  });
  return { proc, grpcPort, exited, lines };
}

/** Stops a child that is still running (SIGTERM, then SIGKILL). */
export async function stopChild(child: Child | undefined): Promise<void> {
  if (!child || child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  await child.exited;
  clearTimeout(timer);
}
