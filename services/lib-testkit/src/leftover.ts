/**
 * A dependency (embedded PostgreSQL, nats-server) left running by a stack that was killed
 * outright keeps its data folder locked; the next start stops it first, naming it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { sleep } from './ports.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command line of `pid` (Linux), or undefined where /proc is not available. */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

/**
 * Stops the process named in `pidFile` (its first line) when it still runs and its command
 * line mentions `marker` (a process that merely reuses the pid is left alone): `signals` in
 * turn, each given `graceMs` to work. Resolves with the pid it stopped, or null.
 */
export async function stopLeftover(pidFile: string, marker: string, signals: NodeJS.Signals[], graceMs = 10_000): Promise<number | null> {
  if (!existsSync(pidFile)) return null;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]?.trim());
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || !alive(pid)) return null;
  const cmd = commandLine(pid);
  if (cmd !== undefined && !cmd.includes(marker)) return null;
  for (const signal of signals) {
    try {
      process.kill(pid, signal);
    } catch {
      return pid;
    }
    const end = Date.now() + graceMs;
    while (Date.now() < end) {
      if (!alive(pid)) return pid;
      await sleep(100);
    }
  }
  return pid;
}
