/**
 * `node bench/dist/rename.js [--records 100000] [--clients 8]`: the cost of renaming a status
 * used by many records, in one run against one database:
 *   - seconds until `POST /schema/statuses/{code}/rename` answers (the schema change, the
 *     snapshot handed to records, the cascade over every record, the journal and its event);
 *   - a raw SQL `UPDATE records.record SET status = … WHERE status = …` of the same rows;
 *   - the latency of ordinary Shot creates through the gateway while the rename runs, next to
 *     the same creates before it.
 * Target (from the issue that asked for it): the rename answers within 1.5× the raw UPDATE.
 * Prints a table and writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { summarize, type LatencySummary } from './stats.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:rename] ${msg}\n`);
const TARGET_RATIO = 1.5;

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer`);
  return n;
}

async function call(url: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(new URL(path, url), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}

/** Creates Shots from `clients` loops until `stop()`; the latency of each create in ms. */
function createLoad(url: string, token: string, projectId: string, clients: number) {
  let running = true;
  const latencies: number[] = [];
  let errors = 0;
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; running; i++) {
      const t0 = performance.now();
      const r = await call(url, 'POST', '/entities/Shot', token, { project_id: projectId, data: { code: `load_${c}_${i}` } });
      if (r.status === 200 || r.status === 201) latencies.push(performance.now() - t0);
      else errors++;
    }
  });
  return {
    async stop(): Promise<{ latency: LatencySummary; creates: number; errors: number }> {
      running = false;
      await Promise.all(loops);
      return { latency: summarize(latencies), creates: latencies.length, errors };
    },
  };
}

async function main(): Promise<number> {
  const records = arg('records', 100_000);
  const clients = arg('clients', 8);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-rename-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('benchren');
  let stack: Stack | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  try {
    log(`starting the stack (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix,
      logDir: join(dir, 'logs'),
      log,
    });
    const fx = await bootstrapGateway(stack.url);
    const token = fx.apiKey;
    await sql.connect();
    // bench_a: renamed on a quiet stack; bench_c: the raw UPDATE, also quiet; bench_e: renamed
    // while Shots are being created (for their latency).
    const sets = ['bench_a', 'bench_c', 'bench_e'];
    for (const code of sets) {
      const r = await call(stack.url, 'POST', '/schema/statuses', token, { code, name: code, state: 'in_progress' });
      if (r.status !== 200) throw new Error(`creating status ${code} answered ${r.status}: ${JSON.stringify(r.json)}`);
    }
    // Equal sets of Shots, written straight into the record table (the API would take minutes).
    log(`inserting ${sets.length} × ${records} Shots`);
    for (const status of sets) {
      await sql.query(
        `insert into records.record (id, entity_type, project_id, status, active, created_by, created_at, updated_at, data)
         select gen_random_uuid(), 'Shot', $1::uuid, $2, true, $3::uuid, now(), now(), jsonb_build_object('code', $2 || '_' || g)
           from generate_series(1, $4::int) g`,
        [fx.projectId, status, fx.userId, records],
      );
    }
    await sql.query('vacuum analyze records.record');
    const rename = async (from: string, to: string) => {
      const t0 = performance.now();
      const r = await call(stack!.url, 'POST', `/schema/statuses/${from}/rename`, token, { new_code: to });
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`rename answered ${r.status}: ${JSON.stringify(r.json)}`);
      const left = await sql.query<{ n: number }>('select count(*)::int as n from records.record where status = $1', [from]);
      return { ms: Math.round(ms), rewritten: (r.json as { rewritten?: number }).rewritten, left_with_old_code: left.rows[0]!.n };
    };

    log(`rename bench_a → bench_b over ${records} records`);
    const quiet = await rename('bench_a', 'bench_b');
    log(`raw SQL UPDATE of ${records} other records`);
    const t1 = performance.now();
    const raw = await sql.query("update records.record set status = 'bench_d' where status = 'bench_c'");
    const rawMs = Math.round(performance.now() - t1);

    log(`creates alone (${clients} clients, 5 s)`);
    let load = createLoad(stack.url, token, fx.projectId, clients);
    await new Promise((r) => setTimeout(r, 5000));
    const before = await load.stop();
    log(`rename bench_e → bench_f over ${records} records, with ${clients} clients creating`);
    load = createLoad(stack.url, token, fx.projectId, clients);
    await new Promise((r) => setTimeout(r, 500));
    const loaded = await rename('bench_e', 'bench_f');
    const during = await load.stop();

    const ratio = quiet.ms / rawMs;
    const report = {
      at: new Date().toISOString(),
      records,
      clients,
      rename: quiet,
      raw_update: { ms: rawMs, rows: raw.rowCount },
      ratio: Number(ratio.toFixed(2)),
      target: `rename ≤ ${TARGET_RATIO}× raw UPDATE`,
      verdict: ratio <= TARGET_RATIO ? 'PASS' : 'MISS',
      rename_under_load: loaded,
      creates_alone: before,
      creates_during_rename: during,
    };
    const p = (s: LatencySummary) => `p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`;
    const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
    process.stdout.write(
      [
        `rename of a status used by ${records} records: ${secs(quiet.ms)} to answer (${quiet.rewritten} rewritten, ${quiet.left_with_old_code} left)`,
        `raw SQL UPDATE of ${raw.rowCount} rows: ${secs(rawMs)}`,
        `ratio ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}): ${report.verdict}`,
        `the same rename while ${clients} clients create Shots: ${secs(loaded.ms)}`,
        `creates alone:         ${before.creates} (${before.errors} errors), ${p(before.latency)}`,
        `creates during rename: ${during.creates} (${during.errors} errors), ${p(during.latency)}`,
        '',
      ].join('\n'),
    );
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `rename-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
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
    process.stderr.write(`bench:rename failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
