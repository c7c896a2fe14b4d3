/**
 * `node bench/dist/validation.js [--clients 32] [--seconds 12] [--warmup 3] [--rounds 2]`: what
 * schema validation costs a create, in one run against one stack. Every request creates a Shot
 * with six fields, one of them a link to a Sequence (`code`, `description`, `sequence`, `cut_in`,
 * `cut_out` and a custom float field `fps`), through the gateway with wrk:
 *   - with validation: the schema as the schema service applied it (every key, value and the link
 *     target checked, the schema version confirmed in the insert statement);
 *   - without validation: the same stack with records' stored schema version set to 0 (records then
 *     accepts data as given and checks only the project, as before the schema existed).
 * The two alternate for `--rounds` rounds; the schema service's periodic re-sync is slowed so it
 * does not put the schema back mid-phase. Target (from the issue that asked for it): with
 * validation ≥ 0.9× without. Prints a table and writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { waitOutboxEmpty } from './db.probe.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { ensureWrk, runWrk, wrkErrors, type WrkRun } from './wrk.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:validation] ${msg}\n`);
const TARGET_RATIO = 0.9;

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer`);
  return n;
}

async function call(url: string, path: string, token: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}

async function ok(url: string, path: string, token: string, body: unknown): Promise<{ id: string }> {
  const r = await call(url, path, token, body);
  if (r.status !== 200) throw new Error(`POST ${path} answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json as { id: string };
}

type Mode = 'validated' | 'unvalidated';

async function main(): Promise<number> {
  const clients = arg('clients', 32);
  const seconds = arg('seconds', 12);
  const warmup = arg('warmup', 3);
  const rounds = arg('rounds', 2);
  await ensureWrk(log);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-validation-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('benchval');
  let stack: Stack | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  try {
    log(`starting the stack (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix,
      logDir: join(dir, 'logs'),
      // The periodic re-sync would put the schema back while the unvalidated phase runs.
      serviceEnv: { schema: { SCHEMA_SYNC_MS: '600000' } },
      log,
    });
    const fx = await bootstrapGateway(stack.url);
    await sql.connect();
    const field = await call(stack.url, '/schema/entity-types/Shot/fields', fx.apiKey, { code: 'fps', name: 'FPS', type: 'float' });
    if (field.status !== 200) throw new Error(`adding Shot.fps answered ${field.status}: ${JSON.stringify(field.json)}`);
    const sequence = await ok(stack.url, '/entities/Sequence', fx.apiKey, { project_id: fx.projectId, data: { code: 'sq_bench' } });
    const data = { description: 'a benchmark shot', sequence: { type: 'Sequence', id: sequence.id }, cut_in: 1001, cut_out: 1100, fps: 23.976 };
    const dataTail = `,${JSON.stringify(data).slice(1, -1)}`;
    const version = Number((await sql.query<{ v: string }>('select version as v from records.schema_state')).rows[0]!.v);
    log(`schema version ${version}; Shot body: ${JSON.stringify({ project_id: fx.projectId, data: { code: '…', ...data } })}`);

    const setMode = async (mode: Mode): Promise<void> => {
      await sql.query('update records.schema_state set version = $1', [mode === 'validated' ? version : 0]);
      // Show that the mode is in force: an unknown key is refused only with validation.
      const probe = await call(stack!.url, '/entities/Shot', fx.apiKey, {
        project_id: fx.projectId,
        data: { code: `probe_${mode}_${Date.now()}`, no_such_field: 1 },
      });
      const expected = mode === 'validated' ? 422 : 200;
      if (probe.status !== expected) throw new Error(`${mode}: a Shot with an unknown key answered ${probe.status}, expected ${expected}`);
    };
    const phase = async (mode: Mode, round: number, measured: boolean): Promise<WrkRun> => {
      await setMode(mode);
      const run = await runWrk({
        url: `${stack!.url}/entities/Shot`,
        clients,
        threads: 1,
        seconds: measured ? seconds : warmup,
        dir,
        name: `${mode}_${round}_${measured ? 'm' : 'w'}`,
        projectId: fx.projectId,
        token: fx.apiKey,
        dataTail,
      });
      if (wrkErrors(run) > 0) throw new Error(`${mode} round ${round}: ${wrkErrors(run)} failed requests`);
      const drained = await waitOutboxEmpty(db.url, 120_000);
      if (drained === null) throw new Error('the outbox did not drain within 2 minutes');
      return run;
    };

    const runs: Record<Mode, WrkRun[]> = { validated: [], unvalidated: [] };
    for (let round = 1; round <= rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or fuller) database.
      const order: Mode[] = round % 2 === 1 ? ['unvalidated', 'validated'] : ['validated', 'unvalidated'];
      for (const mode of order) {
        log(`round ${round}: ${mode}, ${clients} clients, ${warmup} s warm-up + ${seconds} s`);
        await phase(mode, round, false);
        runs[mode].push(await phase(mode, round, true));
      }
    }
    await sql.query('update records.schema_state set version = $1', [version]);

    const mean = (xs: WrkRun[]) => xs.reduce((s, r) => s + r.requestsPerSec, 0) / xs.length;
    const rps = { validated: mean(runs.validated), unvalidated: mean(runs.unvalidated) };
    const ratio = rps.validated / rps.unvalidated;
    const report = {
      at: new Date().toISOString(),
      clients,
      seconds,
      rounds,
      shot_fields: ['code', ...Object.keys(data)],
      requests_per_sec: { validated: Math.round(rps.validated), unvalidated: Math.round(rps.unvalidated) },
      ratio: Number(ratio.toFixed(3)),
      target: `validated ≥ ${TARGET_RATIO}× unvalidated`,
      verdict: ratio >= TARGET_RATIO ? 'PASS' : 'MISS',
      runs,
    };
    const row = (mode: Mode) =>
      `${mode.padEnd(12)} ${runs[mode].map((r) => r.requestsPerSec.toFixed(0).padStart(6)).join(' ')}  mean ${rps[mode].toFixed(0).padStart(6)} req/s` +
      `  p99 ${runs[mode].map((r) => `${r.latencyMs.p99?.toFixed(1) ?? '?'} ms`).join(' / ')}`;
    process.stdout.write(
      [
        `Shot creates through the gateway at ${clients} clients (6 fields, one link), ${rounds} round(s) of ${seconds} s each:`,
        row('unvalidated'),
        row('validated'),
        `ratio ${ratio.toFixed(3)} (target ≥ ${TARGET_RATIO}): ${report.verdict}`,
        '',
      ].join('\n'),
    );
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `validation-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
    return 0;
  } finally {
    await sql.end().catch(() => {});
    await stack?.stop();
    await deleteStreams(natsPrefix).catch(() => {});
    await db.drop().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:validation failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
