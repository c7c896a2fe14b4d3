// The tasks behind the npm scripts; always run on Node 24 by scripts/run.mjs.
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);

function say(msg) {
  process.stderr.write(`[reelbase] ${msg}\n`);
}

/** The steps running now (more than one while a lane runs beside the main line), and the stop signal received, if any. */
const running = new Set();
let stopSignal = null;
// Installed once for the whole task: a stop signal goes to the running step (which stops
// itself, e.g. the stack in order) and no later step starts. This process exits only when
// the step has exited.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    stopSignal ??= sig;
    for (const child of running) child.kill(sig);
  });
}

/**
 * Runs a command to completion, inheriting stdio; rejects on a non-zero exit or an earlier stop
 * signal. `quiet`: the command says itself why it failed, so only its exit status is passed on.
 * `collect`: its output is kept (stdout and stderr in arrival order) and handed to this function
 * instead of being printed, for a step that runs beside another.
 */
function run(cmd, args, { quiet = false, collect, ...opts } = {}) {
  return new Promise((resolvePromise, reject) => {
    if (stopSignal) return reject(new Error(`stopped by ${stopSignal}`));
    const child = spawn(cmd, args, { stdio: collect ? ['ignore', 'pipe', 'pipe'] : 'inherit', cwd: ROOT, ...opts });
    running.add(child);
    if (collect) {
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
    }
    child.on('error', (err) => {
      running.delete(child);
      reject(new Error(`${cmd} ${args.join(' ')} could not start (${err.message})`));
    });
    child.on('exit', (code, signal) => {
      running.delete(child);
      if (code === 0) return resolvePromise();
      const err = new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}`);
      if (quiet && code !== null) err.exitCode = code;
      reject(err);
    });
  });
}

async function build() {
  say('building (tsc -b)');
  await run(bin('tsc'), ['-b', 'tsconfig.json']);
  // The TypeScript client's types come from the gateway's OpenAPI document, built just above.
  say('TypeScript client: types from the OpenAPI document, then tsc -b');
  await run(process.execPath, [join(ROOT, 'clients/typescript/scripts/generate.mjs')]);
  await run(bin('tsc'), ['-b', 'clients/typescript']);
}

/** ESLint (type-aware; layer boundaries from scripts/eslint-layers.mjs), Prettier, the tests' types, and the generated env tables. */
async function lint() {
  say('lint: ESLint (floating promises, layer boundaries)');
  // Type-aware linting holds every project's program at once (about 4.4 GB of heap for this
  // workspace), past Node's default old-space limit; give it room rather than fail on a fresh machine.
  const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=8192`.trim();
  await run(bin('eslint'), ['--max-warnings', '0', '.'], { env: { ...process.env, NODE_OPTIONS: nodeOptions } });
  say('lint: Prettier (formatting)');
  await run(bin('prettier'), ['--check', '--log-level', 'warn', '.']);
  say('lint: type-check of the tests (tsconfig.tests.json)');
  await run(bin('tsc'), ['-p', 'tsconfig.tests.json']);
  say('lint: environment-variable tables match the config shapes');
  await run(process.execPath, [join(ROOT, 'scripts/env-tables.mjs'), '--check']);
}

/** The end-to-end file that mostly waits on the real clock (docs/scheduler.md). */
const CLOCK_E2E = 'test/scheduler.e2e.spec.ts';

const tasks = {
  build,
  async lint() {
    await build();
    await lint();
  },
  async start(args) {
    await build();
    // The stack stops itself should this process disappear without passing a signal on.
    await run(process.execPath, [join(ROOT, 'services/lib-testkit/dist/stack.cli.js'), ...args], {
      env: { ...process.env, STACK_PARENT_PID: String(process.pid) },
      quiet: true,
    });
  },
  async test(args) {
    await build();
    // The scheduler's end-to-end file spends its two minutes waiting for the real clock's minute
    // boundaries, with one idle stack: it runs beside the static checks (one core each), its
    // output printed when it ends, and the other end-to-end files run one at a time after the
    // unit tier as before.
    say(`end-to-end, beside the static checks: ${CLOCK_E2E} (output when it ends)`);
    const chunks = [];
    const clockLane = run(bin('vitest'), ['run', '--config', 'test/vitest.config.ts', CLOCK_E2E], { collect: (d) => chunks.push(d) }).then(
      () => null,
      (err) => err,
    );
    let staticError = null;
    try {
      await lint();
      say('proto: buf lint and generated-code drift check');
      await run(process.execPath, [join(ROOT, 'scripts/proto-check.mjs')]);
      say('Helm chart: lint, render and validate');
      await run(process.execPath, [join(ROOT, 'scripts/helm-check.mjs')]);
      say('alerting rules: promtool check rules and promtool test rules');
      await run(process.execPath, [join(ROOT, 'scripts/rules-check.mjs')]);
    } catch (err) {
      staticError = err;
    }
    const clockError = await clockLane;
    say(`${CLOCK_E2E}: ${clockError ? 'FAILED' : 'passed'}`);
    process.stdout.write(Buffer.concat(chunks));
    if (staticError ?? clockError) throw staticError ?? clockError;
    say('unit and integration tests');
    await run(bin('vitest'), ['run', '--config', 'vitest.config.ts', ...args]);
    say('end-to-end tests (whole stack)');
    await run(bin('vitest'), ['run', '--config', 'test/vitest.config.ts', '--exclude', CLOCK_E2E]);
  },
  async bench(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/run.js'), ...args]);
  },
  async 'bench:rename'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/rename.js'), ...args]);
  },
  async 'bench:validation'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/validation.js'), ...args]);
  },
  async 'bench:query'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/query.js'), ...args]);
  },
  async 'bench:notifier'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/notifier.js'), ...args]);
  },
  async 'bench:farm'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/farm.js'), ...args]);
  },
  /** The farm's contention test at full size: 10,000 chunks, 32 agents, through the gateway (docs/farm.md). */
  async 'chaos:farm'(args) {
    await build();
    await run(bin('vitest'), ['run', '--config', 'test/vitest.config.ts', 'test/farm.e2e.spec.ts', '-t', 'concurrent agents', ...args], {
      env: { ...process.env, FARM_E2E_CHUNKS: process.env.FARM_E2E_CHUNKS ?? '10000' },
    });
  },
  /** Each service killed with SIGKILL, NATS and PostgreSQL restarted, under a mixed load; a table of what was kept (docs/operations.md, "Faults, counted"). */
  async chaos(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/chaos.js'), ...args], { quiet: true });
  },
  async 'bench:media'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/media.js'), ...args]);
  },
  async 'bench:addons'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/addons.js'), ...args]);
  },
  async 'bench:lone'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/write.probe.js'), ...args]);
  },
  async 'bench:import'(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/sync.js'), ...args]);
  },
  /** One image per service from deploy/Dockerfile with buildah, on a locally built Node 24 base (docs/operations.md, "Images"). */
  async images(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'scripts/images.mjs'), 'build', ...args]);
  },
  /** Every image as a container against the local PostgreSQL, NATS and S3 stand-in, and an API walk-through. */
  async 'images:smoke'() {
    await build();
    await run(process.execPath, [join(ROOT, 'scripts/images-smoke.mjs')]);
  },
  async hostile(args) {
    await build();
    await run(process.execPath, [join(ROOT, 'bench/dist/hostile.js'), ...args]);
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
    if (err.exitCode !== undefined) process.exit(err.exitCode);
    say(err.message);
    process.exit(stopSignal ? 128 + (osConstants.signals[stopSignal] ?? 15) : 1);
  }
}
