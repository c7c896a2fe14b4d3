#!/usr/bin/env node
// Checks the chart's alerting rules with promtool (Debian package `prometheus`):
//   promtool check rules charts/reelbase/files/alerts.yaml
//   promtool test rules charts/reelbase/tests/*.test.yaml
// promtool is PROMTOOL when set (which must then name an executable file: a wrong PROMTOOL is an
// error, never a reason to install), else looked up on PATH, else at /usr/bin/promtool. When it is
// missing and this runs as root on a system with apt-get, the Debian package is installed (saying
// so), as the project brings in its other system tools; otherwise the check fails and says how to
// install it. Every failure to find or run promtool is one sentence, not a stack trace.
// Usage: node scripts/rules-check.mjs
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { howItEnded, outputTail, which } from './which.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where Debian's package puts promtool, looked at when PATH has none (a PATH without /usr/bin). */
export const PROMTOOL_FALLBACKS = ['/usr/bin/promtool'];

const HOW_TO_INSTALL =
  'Install it (Debian/Ubuntu: `apt-get install --no-install-recommends prometheus`, or a Prometheus release tarball) or set PROMTOOL to its path.';

/** A set-up failure of the check, said in one sentence. */
export class RulesCheckError extends Error {}

/**
 * @typedef {object} Options
 * @property {NodeJS.ProcessEnv} [env] the environment: PATH and PROMTOOL are read from it, and the programs run with it
 * @property {string[]} [fallbacks] where promtool may be when PATH has none
 * @property {boolean} [isRoot] whether a missing promtool may be installed with apt-get
 * @property {(line: string) => void} [say] progress lines
 */

/**
 * promtool: PROMTOOL (an error when it is not an executable file), else the first on PATH, else
 * the first of `fallbacks` that exists and is executable; undefined when there is none.
 * @param {Options} [o]
 */
export function findPromtool({ env = process.env, fallbacks = PROMTOOL_FALLBACKS } = {}) {
  const path = env.PATH ?? '';
  if (env.PROMTOOL) {
    const set = which(env.PROMTOOL, path);
    if (!set) {
      const where = env.PROMTOOL.includes('/') ? 'an executable file' : 'a program on PATH';
      throw new RulesCheckError(`PROMTOOL is ${env.PROMTOOL}, which is not ${where}: point it at promtool, or unset it to look on PATH.`);
    }
    return set;
  }
  return which('promtool', path) ?? fallbacks.map((f) => which(f)).find((f) => f !== undefined);
}

/**
 * promtool, found (see findPromtool) or installed with apt-get (Debian package `prometheus`) when
 * this runs as root and apt-get is on PATH; a RulesCheckError saying what to do otherwise.
 * @param {Options} [o]
 */
export function ensurePromtool({ env = process.env, fallbacks = PROMTOOL_FALLBACKS, isRoot = process.getuid?.() === 0, say = console.log } = {}) {
  const found = findPromtool({ env, fallbacks });
  if (found) return found;
  const aptGet = which('apt-get', env.PATH ?? '');
  if (!isRoot || !aptGet) {
    const why = !aptGet ? 'there is no apt-get to install it with' : 'installing it needs root';
    throw new RulesCheckError(`promtool was not found on PATH (nor at ${fallbacks.join(', ')}) and ${why}. ${HOW_TO_INSTALL}`);
  }
  say('  promtool not found: installing Debian package prometheus with apt-get (once)');
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  // --reinstall: also when dpkg holds the package but its promtool is gone.
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', '--reinstall', 'prometheus']]) {
    const r = spawnSync(aptGet, args, { env: aptEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 });
    if (r.error || r.status !== 0) throw new RulesCheckError(`apt-get ${args.join(' ')} failed (${howItEnded(r)}):\n${outputTail(r)}`);
  }
  // The package starts a Prometheus server through its service scripts where an init system
  // runs; promtool is all this check uses.
  const after = findPromtool({ env, fallbacks });
  if (!after) throw new RulesCheckError(`apt-get installed prometheus but promtool is still not on PATH (nor at ${fallbacks.join(', ')})`);
  say(`  installed ${after}`);
  return after;
}

/**
 * The first line `promtool --version` prints; a RulesCheckError when it cannot run or fails.
 * @param {string} promtool
 * @param {NodeJS.ProcessEnv} [env]
 */
export function promtoolVersion(promtool, env = process.env) {
  const r = spawnSync(promtool, ['--version'], { encoding: 'utf8', env });
  if (r.error || r.status !== 0) throw new RulesCheckError(`${promtool} --version failed (${howItEnded(r)}): ${outputTail(r, 2) || 'no output'}`);
  return `${r.stdout}${r.stderr}`.trim().split('\n')[0];
}

/**
 * The whole check on the chart under `root`; returns the exit code (0: the rules load and every
 * rule test passes).
 * @param {Options & { root?: string, err?: (line: string) => void }} [o]
 */
export function rulesCheck({ root = ROOT, env = process.env, fallbacks, isRoot, say = console.log, err = console.error } = {}) {
  const chart = join(root, 'charts', 'reelbase');
  const rules = relative(root, join(chart, 'files', 'alerts.yaml'));
  const testDir = join(chart, 'tests');
  let promtool;
  try {
    promtool = ensurePromtool({ env, fallbacks, isRoot, say });
    say(`  ${promtoolVersion(promtool, env)}`);
  } catch (e) {
    if (!(e instanceof RulesCheckError)) throw e;
    err(`rules-check: ${e.message}`);
    return 1;
  }
  let failed = 0;
  const step = (args) => {
    const label = `promtool ${args.join(' ')}`;
    const r = spawnSync(promtool, args, { cwd: root, encoding: 'utf8', env });
    if (!r.error && r.status === 0) {
      say(`  ok    ${label}`);
      return;
    }
    failed++;
    const out = (r.error ? '' : `${r.stdout}${r.stderr}`.trim()) || howItEnded(r);
    say(`  FAIL  ${label}\n${out.replace(/^/gm, '        ')}`);
  };
  step(['check', 'rules', rules]);
  const tests = readdirSync(testDir)
    .filter((f) => f.endsWith('.test.yaml'))
    .sort();
  if (!tests.length) {
    failed++;
    say(`  FAIL  no rule tests in ${relative(root, testDir)}`);
  }
  for (const t of tests) step(['test', 'rules', relative(root, join(testDir, t))]);
  say(`rules-check: ${failed ? `${failed} failed` : 'passed'}`);
  return failed ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(rulesCheck());
