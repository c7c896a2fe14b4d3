// Finding the programs the scripts run, and saying how a run of one ended, for scripts/rules-check.mjs,
// scripts/images.mjs, scripts/helm-check.mjs and scripts/run.mjs.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

/** Whether `file` is a regular file this process may execute (root included: a file without any x bit is not). */
export function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The file a command `name` would run, or undefined. A name with a slash is that very file (relative to
 * the working directory), only when it exists and is executable; a bare name is looked up in `pathList`
 * (PATH by default), then in `extraDirs`.
 * @param {string} name
 * @param {string} [pathList]
 * @param {string[]} [extraDirs]
 * @returns {string | undefined}
 */
export function which(name, pathList = process.env.PATH ?? '', extraDirs = []) {
  if (name.includes('/')) return isExecutable(name) ? resolve(name) : undefined;
  for (const dir of [...pathList.split(delimiter), ...extraDirs].filter(Boolean)) {
    const p = join(dir, name);
    if (isExecutable(p)) return p;
  }
  return undefined;
}

/**
 * How a `spawnSync` run ended, in words: `status 2`, `killed by SIGKILL`, or why it could not start.
 * @param {import('node:child_process').SpawnSyncReturns<unknown>} r
 */
export function howItEnded(r) {
  if (r.error) return `could not run: ${r.error.message}`;
  if (r.signal) return `killed by ${r.signal}`;
  return `status ${r.status}`;
}

/**
 * The last `lines` lines of a run's error output (else its output; empty when there was none).
 * @param {import('node:child_process').SpawnSyncReturns<string>} r
 */
export function outputTail(r, lines = 5) {
  return (r.stderr || r.stdout || '').trim().split('\n').slice(-lines).join('\n');
}
