/**
 * "Has the process that started me gone?", for the stages of `npm start` and the services it
 * runs, which must stop when whatever supervises them disappears without a word (SIGKILL).
 */
import { readFileSync } from 'node:fs';

/** The current parent process id (Linux: read afresh; `process.ppid` is fixed at start-up). */
function currentParent(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // "<pid> (<command>) <state> <ppid> ...": the command may contain spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** True once `parent` has exited: this process was handed to another parent, or `parent` no longer exists. */
export function parentGone(parent: number): boolean {
  const now = currentParent();
  if (now !== undefined) return now !== parent;
  try {
    process.kill(parent, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Calls `onGone` once `parent` has exited, checking every 250 ms without keeping the process alive. */
export function watchParent(parent: number, onGone: () => void): void {
  if (parent <= 1) return;
  const timer = setInterval(() => {
    if (!parentGone(parent)) return;
    clearInterval(timer);
    onGone();
  }, 250);
  timer.unref();
}
