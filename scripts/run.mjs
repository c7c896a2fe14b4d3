#!/usr/bin/env node
// Entry point of `npm start`, `npm test`, `npm run build` and `npm run bench`.
// Runs on whatever Node the machine has (20 or newer): it installs the workspace when
// needed (pnpm, pinned), then re-executes itself on the Node 24 LTS binary that the
// workspace brings in from the npm registry, so every service and test runs on Node 24.
import { spawnSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { existsSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '10.34.8';
const NODE_MAJOR = 24;
const STAMP = join(ROOT, 'node_modules', '.reelbase-install');

function say(msg) {
  process.stderr.write(`[reelbase] ${msg}\n`);
}
// Output gone (a closed terminal): keep passing signals on and waiting for the child regardless.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.error) {
    say(`${cmd} ${args.join(' ')} could not run (${r.error.message})${r.error.code === 'ENOENT' ? `: ${cmd} is not on PATH` : ''}`);
    process.exit(1);
  }
  if (r.status !== 0) {
    say(`${cmd} ${args.join(' ')} failed with exit code ${r.status ?? r.signal}`);
    process.exit(r.status ?? 1);
  }
}

function manifestHash() {
  const h = createHash('sha256');
  const files = ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', '.npmrc'];
  for (const dir of ['proto', 'test', 'bench']) files.push(join(dir, 'package.json'));
  for (const group of ['services', 'clients']) {
    const dir = join(ROOT, group);
    if (existsSync(dir)) {
      for (const d of readdirSync(dir).sort()) files.push(join(group, d, 'package.json'));
    }
  }
  for (const f of files) {
    const p = join(ROOT, f);
    h.update(f);
    if (existsSync(p)) h.update(readFileSync(p));
  }
  return h.digest('hex');
}

function ensureInstalled() {
  const want = manifestHash();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === want) return;
  const localPnpm = join(ROOT, 'node_modules', '.bin', 'pnpm');
  const frozen = existsSync(join(ROOT, 'pnpm-lock.yaml')) && process.env.CI_ALLOW_LOCK_UPDATE !== '1';
  const args = ['install', ...(frozen ? ['--frozen-lockfile'] : []), '--reporter=append-only'];
  say(`installing the workspace (pnpm ${PNPM_VERSION})`);
  if (existsSync(localPnpm)) run(localPnpm, args);
  else run('npm', ['exec', '--yes', `--package=pnpm@${PNPM_VERSION}`, '--', 'pnpm', ...args]);
  writeFileSync(STAMP, manifestHash());
}

function node24() {
  for (const pkg of [`node-${process.platform}-${process.arch}`]) {
    const bin = join(ROOT, 'node_modules', pkg, 'bin', 'node');
    if (existsSync(bin)) return bin;
  }
  return null;
}

/** Signals that mean "stop": each stage passes them on to its child and waits for it. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** The current parent pid (Linux: read afresh; `process.ppid` is fixed at start-up), else undefined. */
function currentParent() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * Calls `onGone` once the process that started this one has exited (checked every 250 ms), so a
 * parent killed outright (SIGKILL, a shell that died of SIGTERM) leaves nothing running.
 */
function watchParent(onGone) {
  const parent = process.ppid;
  if (parent <= 1) return;
  const gone = () => {
    const now = currentParent();
    if (now !== undefined) return now !== parent;
    try {
      process.kill(parent, 0);
      return false;
    } catch (err) {
      return err.code === 'ESRCH';
    }
  };
  const timer = setInterval(() => {
    if (!gone()) return;
    clearInterval(timer);
    say('the parent process is gone; stopping');
    onGone();
  }, 250);
  timer.unref();
}

const task = process.argv[2] ?? 'build';
const onNode24 = Number(process.versions.node.split('.')[0]) >= NODE_MAJOR;

if (!onNode24 || !process.env.REELBASE_BOOTSTRAPPED) {
  ensureInstalled();
  const bin = node24();
  if (!bin && !onNode24) {
    say(`no Node ${NODE_MAJOR} binary for ${process.platform}-${process.arch} in node_modules; install Node ${NODE_MAJOR} LTS`);
    process.exit(1);
  }
  const exe = bin ?? process.execPath;
  const env = {
    ...process.env,
    REELBASE_BOOTSTRAPPED: '1',
    PATH: `${dirname(exe)}${process.platform === 'win32' ? ';' : ':'}${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
  };
  const child = spawn(exe, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env });
  // Every stop signal is passed on and this process waits for the child's exit, so
  // `kill -INT`/`kill -TERM` of the npm process stops the whole stack in order.
  for (const sig of STOP_SIGNALS) process.on(sig, () => child.kill(sig));
  // Under npm the parent is npm (or the shell it runs scripts with): when it is gone, stop too.
  if (process.env.npm_lifecycle_event) watchParent(() => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + (osConstants.signals[signal] ?? 15) : 1)));
} else {
  const { runTask } = await import('./tasks.mjs');
  // The first stage above started this process; should it die, stop as if told to.
  watchParent(() => process.kill(process.pid, 'SIGTERM'));
  await runTask(task, process.argv.slice(3));
}
