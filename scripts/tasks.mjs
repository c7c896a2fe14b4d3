// The tasks behind the npm scripts; always run on Node 24 by scripts/run.mjs.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);

function say(msg) {
  process.stderr.write(`[reelbase] ${msg}\n`);
}

/** Runs a command to completion, inheriting stdio; rejects on a non-zero exit. */
function run(cmd, args, opts = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
    const forward = (sig) => child.kill(sig);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      if (code === 0) resolvePromise();
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}`));
    });
  });
}

async function build() {
  say('building (tsc -b)');
  await run(bin('tsc'), ['-b', 'tsconfig.json']);
}

const tasks = {
  build,
  async start(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'services/lib-testkit/dist/stack.cli.js'), ...args]);
  },
  async test(args) {
    await build();
    say('proto: buf lint and generated-code drift check');
    await run(process.execPath, [join(ROOT, 'scripts/proto-check.mjs')]);
    say('Helm chart: lint, render and validate');
    await run(process.execPath, [join(ROOT, 'scripts/helm-check.mjs')]);
    say('unit and integration tests');
    await run(bin('vitest'), ['run', '--config', 'vitest.config.ts', ...args]);
    say('end-to-end tests (whole stack)');
    await run(bin('vitest'), ['run', '--config', 'test/vitest.config.ts']);
  },
  async bench(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/run.js'), ...args]);
  },
};

export async function runTask(name, args) {
  const task = tasks[name];
  if (!task) {
    say(`unknown task ${name}; one of ${Object.keys(tasks).join(', ')}`);
    process.exit(2);
  }
  try {
    await task(args);
  } catch (err) {
    say(err.message);
    process.exit(1);
  }
}
