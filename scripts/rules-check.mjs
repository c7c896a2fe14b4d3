#!/usr/bin/env node
// Checks the chart's alerting rules with promtool (Debian package `prometheus`):
//   promtool check rules charts/reelbase/files/alerts.yaml
//   promtool test rules charts/reelbase/tests/*.test.yaml
// promtool is looked up on PATH (or PROMTOOL). When it is missing and this runs as root on a
// system with apt-get, the Debian package is installed (saying so), as the project brings in its
// other system tools; otherwise the check fails and says how to install it.
// Usage: node scripts/rules-check.mjs
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHART = join(ROOT, 'charts', 'reelbase');
const RULES = join(CHART, 'files', 'alerts.yaml');
const TESTS = join(CHART, 'tests');

function say(msg) {
  console.log(msg);
}

function which(name) {
  if (name.includes('/')) return name;
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

function findPromtool() {
  if (process.env.PROMTOOL) return which(process.env.PROMTOOL);
  return which('promtool') ?? which('/usr/bin/promtool');
}

function ensurePromtool() {
  const found = findPromtool();
  if (found) return found;
  const canInstall = process.getuid?.() === 0 && which('apt-get') !== undefined;
  if (!canInstall) {
    console.error(
      'rules-check: promtool was not found on PATH. Install it (Debian/Ubuntu: `apt-get install --no-install-recommends prometheus`, ' +
        'or a Prometheus release tarball) or set PROMTOOL to its path.',
    );
    process.exit(1);
  }
  say('  promtool not found: installing Debian package prometheus with apt-get (once)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'prometheus']]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 });
    if (r.status !== 0) {
      console.error(
        `rules-check: apt-get ${args.join(' ')} failed (status ${r.status ?? r.signal}):\n${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join('\n')}`,
      );
      process.exit(1);
    }
  }
  // The package starts a Prometheus server through its service scripts where an init system
  // runs; promtool is all this check uses.
  const after = findPromtool();
  if (!after) {
    console.error('rules-check: apt-get installed prometheus but promtool is still not on PATH');
    process.exit(1);
  }
  say(`  installed ${after}`);
  return after;
}

const promtool = ensurePromtool();
const version = spawnSync(promtool, ['--version'], { encoding: 'utf8' });
say(`  ${(version.stdout || version.stderr).split('\n')[0]}`);
let failed = 0;
function step(args, label) {
  const r = spawnSync(promtool, args, { cwd: ROOT, encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`.trim();
  if (r.status === 0) {
    say(`  ok    ${label}`);
  } else {
    failed++;
    say(`  FAIL  ${label}\n${out.replace(/^/gm, '        ')}`);
  }
}
step(['check', 'rules', relative(ROOT, RULES)], `promtool check rules ${relative(ROOT, RULES)}`);
const tests = readdirSync(TESTS)
  .filter((f) => f.endsWith('.test.yaml'))
  .sort();
if (!tests.length) {
  failed++;
  say(`  FAIL  no rule tests in ${relative(ROOT, TESTS)}`);
}
for (const t of tests) step(['test', 'rules', relative(ROOT, join(TESTS, t))], `promtool test rules ${relative(ROOT, join(TESTS, t))}`);
say(`rules-check: ${failed ? `${failed} failed` : 'passed'}`);
process.exit(failed ? 1 : 0);
