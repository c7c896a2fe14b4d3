/**
 * `node bench/dist/query.js [--records 1000000] [--projects 50] [--iterations 200] [--clients 8] [--create-seconds 10] [--keep-db]`:
 * queries on a production-sized record table, in one run against one dedicated database:
 *   1. seeds `--records` records over `--projects` projects straight into records.record
 *      (query.seed.ts), with the query indexes (records-0004-query-indexes) dropped and the link
 *      table (records-0006-link-table) off: its triggers disabled, the table and its indexes empty;
 *   2. Shot creates through the gateway for `--create-seconds` without those indexes and the link
 *      table, then builds them (the link table filled from the records, its triggers on); after the
 *      queries the same creates with them, without them (dropped, link table off), and with them
 *      (rebuilt): the write cost is the mean with ÷ the mean without (target ≥ 0.9×);
 *   3. p50/p95/p99 through the gateway (HTTP, a real API key), through the bare chain (bare.chain.ts:
 *      an HTTP process and a gRPC process running the compiled plan, none of the services' own work)
 *      and of the same statements records runs (runQueryPlan, every statement in order) raw on pg,
 *      the three in alternating blocks of 50 samples, for (a) type + project + status,
 *      (b) a 2-hop link filter, (c) text contains,
 *      (d) a 3-page keyset walk, (e) include_total on a 100,000-row match (at 1,000,000 records).
 *      Targets: (a), (b) p95 ≤ 20 ms and ≤ 1.5× raw;
 *   4. EXPLAIN (ANALYZE, BUFFERS) of each, asserting no Seq Scan on the record table for (a), (b), (d);
 *   5. after the creates, every Project restricted and an Artist a member of 5 (query.restricted.ts):
 *      (r1) Task status without a project filter and (r2) with a member project's, as that Artist and
 *      as the Admin in alternating blocks. Target: the Artist's p50 and p95 ≤ 1.2× the Admin's.
 * Prints a table and the plans; writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, deleteStreams, type Stack } from '@reelbase/lib-testkit';
import { uniquePrefix } from '@reelbase/lib-testkit';
import { core, kernel } from '@reelbase/records';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { restrictedLines, restrictedShapes } from './query.restricted.js';
import { seedRecords } from './query.seed.js';
import { alternate, pcts, type Pcts } from './stats.js';
import { startBenchStack } from './bench.stack.js';
import { startBareChain, type BareChain } from './bare.chain.js';
import { call, LeanClient } from './http.client.js';

const { compileSchema } = kernel;
const { LINK_INDEXES, LINK_TABLE_OFF_SQL, LINK_TABLE_ON_SQL, planQuery, runQueryPlan, QUERY_INDEXES } = core;
type QueryInput = core.QueryInput;
type SchemaSnapshot = kernel.SchemaSnapshot;
type Statement = core.Statement;

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:query] ${msg}\n`);
const TARGET_P95_MS = 20;
const TARGET_RAW_RATIO = 1.5;
const TARGET_CREATE_RATIO = 0.9;

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return def;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer`);
  return n;
}

/** Shot creates from `clients` loops for `seconds`: creates/s and errors. */
async function createLoad(url: string, token: string, projectId: string, sequenceId: string, clients: number, seconds: number, tag: string) {
  let running = true;
  let creates = 0;
  let errors = 0;
  const latencies: number[] = [];
  const t0 = performance.now();
  const loops = Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; running; i++) {
      const s = performance.now();
      const r = await call(url, 'POST', '/entities/Shot', token, {
        project_id: projectId,
        data: {
          code: `${tag}_${c}_${i}`,
          description: `bench shot ${i} of client ${c}`,
          sequence: { type: 'Sequence', id: sequenceId },
          cut_in: 1001,
          cut_out: 1100,
        },
      });
      if (r.status === 200 || r.status === 201) {
        creates++;
        latencies.push(performance.now() - s);
      } else errors++;
    }
  });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  await Promise.all(loops);
  const elapsed = (performance.now() - t0) / 1000;
  return { creates, errors, perSec: Math.round((creates / elapsed) * 10) / 10, latency: pcts(latencies) };
}

interface Shape {
  key: string;
  title: string;
  type: string;
  body: { filters?: unknown; order?: { field: string; direction?: string }[]; limit: number; include_total?: boolean };
  /** Pages walked per sample (the cursor of each page asks for the next). */
  pages: number;
  /** Asserted: the plan never scans the record table sequentially. */
  noSeqScan: boolean;
}

async function main(): Promise<number> {
  const records = arg('records', 1_000_000);
  const projects = arg('projects', 50);
  const iterations = arg('iterations', 200);
  const clients = arg('clients', 8);
  const createSeconds = arg('create-seconds', 10);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-query-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('benchq');
  let stack: Stack | undefined;
  let bare: BareChain | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  const failures: string[] = [];
  const loadStart = loadavg().map((l) => Math.round(l * 100) / 100);
  try {
    log(`starting the stack on database ${db.name} (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix,
      logDir: join(dir, 'logs'),
      log,
    });
    const fx = await bootstrapGateway(stack.url);
    const token = fx.apiKey;
    await sql.connect();

    // 1. Seed without the query indexes and the link table (built in one pass afterwards).
    for (const index of QUERY_INDEXES) await sql.query(`drop index if exists records.${index.name}`);
    for (const st of LINK_TABLE_OFF_SQL) await sql.query(st);
    const t0 = performance.now();
    const seeded = await seedRecords(sql, { records, projects, users: 40, createdBy: fx.userId }, log);
    await sql.query('vacuum analyze records.record');
    const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
    log(`seeded ${seeded.total} records in ${seedSeconds} s: ${JSON.stringify(seeded.byType)}`);

    const show = await sql.query<{ id: string }>("select id from records.record where entity_type = 'Project' and data->>'code' = 'show01'");
    const projectId = show.rows[0]!.id;
    const seq = await sql.query<{ id: string; code: string }>(
      "select id, data->>'code' as code from records.record where entity_type = 'Sequence' and project_id = $1 order by data->>'code' limit 1 offset 2",
      [projectId],
    );
    const sequence =
      seq.rows[0] ??
      (
        await sql.query<{ id: string; code: string }>(
          "select id, data->>'code' as code from records.record where entity_type = 'Sequence' and project_id = $1 limit 1",
          [projectId],
        )
      ).rows[0]!;

    // The creates link their Shots to another sequence than the one (b) filters on (the first by code,
    // when there are several), so (b)'s Shots are the seeded ones only, whatever the create phases add.
    const createSeq = await sql.query<{ id: string }>(
      "select id from records.record where entity_type = 'Sequence' and project_id = $1 and data->>'code' <> $2 order by data->>'code' limit 1",
      [projectId, sequence.code],
    );
    const createSequenceId = createSeq.rows[0]?.id ?? sequence.id;

    // 2. Creates without the query indexes, then build them.
    const settle = async () => {
      // Each create phase starts from a flushed, vacuumed table, so none pays for the one before.
      await sql.query('vacuum analyze records.record');
      await sql.query('checkpoint');
    };
    const phase = async (tag: string) => {
      await settle();
      log(`creates ${tag} (${clients} clients, ${createSeconds} s)`);
      return createLoad(stack!.url, token, projectId, createSequenceId, clients, createSeconds, tag.replace(/\W+/g, '_'));
    };
    const build = async () => {
      const tb = performance.now();
      await sql.query("set maintenance_work_mem = '512MB'");
      await sql.query('create extension if not exists pg_trgm');
      for (const index of QUERY_INDEXES) await sql.query(index.sql);
      const tl = performance.now();
      for (const st of LINK_TABLE_ON_SQL) await sql.query(st);
      const now = performance.now();
      return { indexes: Math.round((tl - tb) / 100) / 10, linkTable: Math.round((now - tl) / 100) / 10 };
    };
    const dropIndexes = async () => {
      for (const index of QUERY_INDEXES) await sql.query(`drop index if exists records.${index.name}`);
      for (const st of LINK_TABLE_OFF_SQL) await sql.query(st);
    };
    const without = await phase('without the query indexes and link table');
    log('building the query indexes and the link table');
    const built = await build();
    const buildSeconds = built.indexes;
    await sql.query('vacuum analyze records.record');
    const sizes = await sql.query<{ name: string; size: string }>(
      `select c.relname as name, pg_size_pretty(pg_relation_size(c.oid)) as size from pg_class c
        where c.relname = any($1::text[]) and c.relnamespace = 'records'::regnamespace order by c.relname`,
      [[...QUERY_INDEXES.map((i) => i.name), 'record_link', 'record_link_from_idx', ...LINK_INDEXES.map((i) => i.name)]],
    );
    const linkRows = Number((await sql.query<{ n: string }>('select count(*) as n from records.record_link')).rows[0]!.n);

    // 3. Query shapes.
    const snap = await sql.query<{ version: string; snapshot: SchemaSnapshot }>('select version, snapshot from records.schema_state where id = 1');
    const schema = compileSchema(Number(snap.rows[0]!.version), snap.rows[0]!.snapshot);
    const shapes: Shape[] = [
      {
        key: 'a',
        title: 'type + project + status',
        type: 'Task',
        body: {
          filters: [
            ['project_id', 'is', projectId],
            ['status', 'is', 'ip'],
          ],
          limit: 50,
        },
        pages: 1,
        noSeqScan: true,
      },
      {
        key: 'b',
        title: '2-hop link filter',
        type: 'Task',
        body: {
          filters: [
            ['project_id', 'is', projectId],
            ['entity.Shot.sequence.Sequence.code', 'is', sequence.code],
          ],
          limit: 50,
        },
        pages: 1,
        noSeqScan: true,
      },
      { key: 'c', title: 'text contains', type: 'Version', body: { filters: [['code', 'contains', '00420_comp_v00']], limit: 50 }, pages: 1, noSeqScan: false },
      { key: 'd', title: '3-page keyset walk', type: 'Task', body: { filters: [['project_id', 'is', projectId]], limit: 100 }, pages: 3, noSeqScan: true },
      {
        key: 'e',
        title: 'include_total',
        type: 'Task',
        body: { filters: [['status', 'is', 'fin']], limit: 50, include_total: true },
        pages: 1,
        noSeqScan: false,
      },
    ];
    // The floor: one record read by id through the gateway (HTTP, auth, gRPC, one primary-key
    // SELECT) next to that SELECT alone; what a query costs on top of it is the query's own.
    const one = await sql.query<{ id: string }>("select id from records.record where entity_type = 'Task' and project_id = $1 limit 1", [projectId]);
    // The query loops' client, the bare chain (bare.chain.ts) and the API key's header.
    const lean = new LeanClient(stack.url);
    bare = await startBareChain(db.url);
    const bareClient = new LeanClient(bare.url);
    const auth = { authorization: `Bearer ${token}` };
    const floorGateway: number[] = [];
    const floorRaw: number[] = [];
    const getOne = async () => {
      const r = await lean.request('GET', `/entities/Task/${one.rows[0]!.id}`, auth);
      if (r.status !== 200) throw new Error(`GET one record answered ${r.status}`);
    };
    await alternate(iterations, [
      { into: floorGateway, run: getOne },
      { into: floorRaw, run: () => sql.query('select * from records.record where id = $1', [one.rows[0]!.id]) },
    ]);
    const floor = { gateway_ms: pcts(floorGateway), raw_ms: pcts(floorRaw) };

    const results = [];
    for (const shape of shapes) {
      log(`(${shape.key}) ${shape.title}: ${iterations} samples through the gateway, the bare chain and raw, in alternating blocks`);
      const path = `/entities/${shape.type}/query`;
      // One walk through the gateway gives the cursors the raw statements use.
      const cursors: (string | undefined)[] = [undefined];
      let matched: { items: number; total?: number } = { items: 0 };
      for (let p = 0; p < shape.pages; p++) {
        const r = await call(stack.url, 'POST', path, token, { ...shape.body, ...(cursors[p] ? { cursor: cursors[p] } : {}) });
        if (r.status !== 200) throw new Error(`(${shape.key}) answered ${r.status}: ${JSON.stringify(r.json).slice(0, 400)}`);
        const page = r.json as { items: unknown[]; next_cursor: string | null; total?: number };
        if (p === 0) matched = { items: page.items.length, ...(page.total !== undefined ? { total: page.total } : {}) };
        if (p + 1 < shape.pages) {
          if (!page.next_cursor) throw new Error(`(${shape.key}) page ${p + 1} has no next_cursor`);
          cursors.push(page.next_cursor);
        }
      }
      // The plan records runs for each page (one row more than the limit), run by the same function
      // records runs it with: the page, the count when asked, the EXISTS form when a hop set passes the cap.
      const plans = cursors.map((cursor) => {
        const input: QueryInput = {
          entityType: shape.type,
          filtersJson: JSON.stringify(shape.body.filters ?? []),
          limit: shape.body.limit,
          includeTotal: shape.body.include_total === true,
          ...(cursor ? { cursor } : {}),
        };
        const { plan } = planQuery(schema, input);
        return { ...plan, limit: plan.limit + 1 };
      });
      const statements: Statement[][] = [];
      for (const plan of plans) {
        const trace: Statement[] = [];
        await runQueryPlan(sql, plan, trace);
        statements.push(trace);
      }
      const planTexts = plans.map((plan) => JSON.stringify(plan));
      const json = { ...auth, 'content-type': 'application/json' };
      const gateway: number[] = [];
      const bareChain: number[] = [];
      const raw: number[] = [];
      await alternate(iterations, [
        {
          into: gateway,
          run: async () => {
            let cursor: string | null = null;
            for (let p = 0; p < shape.pages; p++) {
              const r = await lean.request('POST', path, json, JSON.stringify({ ...shape.body, ...(cursor ? { cursor } : {}) }));
              if (r.status !== 200) throw new Error(`(${shape.key}) answered ${r.status}`);
              // The walk needs each page's cursor; a single page is not parsed (the raw side parses nothing either).
              cursor = p + 1 < shape.pages ? (JSON.parse(r.text) as { next_cursor: string | null }).next_cursor : null;
            }
          },
        },
        {
          into: bareChain,
          run: async () => {
            for (const text of planTexts) {
              const r = await bareClient.request('POST', '/', { 'content-type': 'application/json' }, text);
              if (r.status !== 200) throw new Error(`(${shape.key}) bare chain answered ${r.status}: ${r.text.slice(0, 200)}`);
            }
          },
        },
        {
          into: raw,
          run: async () => {
            for (const plan of plans) await runQueryPlan(sql, plan);
          },
        },
      ]);
      const explained: string[] = [];
      for (const page of statements) {
        for (const st of page) {
          const r = await sql.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${st.text}`, st.values);
          explained.push(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
        }
      }
      const seqScan = explained.some((p) => /Seq Scan on record(_link)?\b/.test(p));
      const g = pcts(gateway);
      const w = pcts(raw);
      const b = pcts(bareChain);
      const ratio = Math.round((g.p95 / w.p95) * 100) / 100;
      const checks: string[] = [];
      if (shape.noSeqScan && seqScan) checks.push('MISS: a Seq Scan on the record table');
      if (shape.key === 'a' || shape.key === 'b') {
        if (g.p95 > TARGET_P95_MS) checks.push(`MISS: gateway p95 ${g.p95} ms > ${TARGET_P95_MS} ms`);
        if (ratio > TARGET_RAW_RATIO) checks.push(`MISS: gateway p95 ${ratio}× raw > ${TARGET_RAW_RATIO}×`);
      }
      failures.push(...checks.map((c) => `(${shape.key}) ${c}`));
      results.push({
        ...shape,
        matched,
        gateway_ms: g,
        bare_chain_ms: b,
        raw_ms: w,
        p95_ratio: ratio,
        bare_chain_p95_ratio: Math.round((b.p95 / w.p95) * 100) / 100,
        seq_scan: seqScan,
        verdict: checks.length ? checks.join('; ') : 'PASS',
        plans: explained,
        statements_per_sample: statements.reduce((n, s) => n + s.length, 0),
        sql: statements[0]!.map((s) => s.text),
      });
    }

    lean.close();
    bareClient.close();

    // Creates with, without, with the indexes (after the first without): the ratio is of the
    // means of the two runs of each, so a drift of the machine over the run favours neither side.
    const withIdx = await phase('with the query indexes and link table');
    await dropIndexes();
    const without2 = await phase('without the query indexes and link table (2)');
    log('building the query indexes and the link table again');
    await build();
    const withIdx2 = await phase('with the query indexes and link table (2)');
    const withoutPerSec = (without.perSec + without2.perSec) / 2;
    const withPerSec = (withIdx.perSec + withIdx2.perSec) / 2;
    const createRatio = Math.round((withPerSec / withoutPerSec) * 100) / 100;

    // 5. Restricted projects, last: every Project restricted from here on (query.restricted.ts).
    const restricted = await restrictedShapes({ url: stack.url, adminKey: token, sql, iterations, log });
    failures.push(...restricted.failures);

    const report = {
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, loadavg_at_start: loadStart, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
      floor_get_by_id: floor,
      records: seeded.total,
      by_type: seeded.byType,
      projects,
      seed_seconds: seedSeconds,
      index_build_seconds: buildSeconds,
      link_table_build_seconds: built.linkTable,
      link_rows: linkRows,
      index_sizes: sizes.rows,
      creates: {
        clients,
        seconds: createSeconds,
        without_query_indexes: [without, without2],
        with_query_indexes: [withIdx, withIdx2],
        ratio: createRatio,
        target: `≥ ${TARGET_CREATE_RATIO}`,
      },
      queries: results,
      restricted,
      failures,
    };
    if (createRatio < TARGET_CREATE_RATIO) failures.push(`creates with the indexes ${createRatio}× without (target ≥ ${TARGET_CREATE_RATIO})`);
    const f = (p: Pcts) => `${p.p50.toFixed(1)} / ${p.p95.toFixed(1)} / ${p.p99.toFixed(1)}`;
    const lines = [
      `records: ${seeded.total} over ${projects} projects (${Object.entries(seeded.byType)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}); seeded in ${seedSeconds} s, query indexes built in ${buildSeconds} s, link table (${linkRows} rows) in ${built.linkTable} s`,
      `index sizes: ${sizes.rows.map((r) => `${r.name} ${r.size}`).join(', ')}`,
      `machine: ${report.machine.cpus} CPUs, load average ${loadStart.join(' ')} at the start, ${report.machine.loadavg_at_end.join(' ')} at the end`,
      '',
      `query (ms, p50 / p95 / p99, ${iterations} samples)       gateway                bare chain             raw SQL            p95 ratio (bare)  matched   verdict`,
      `(0) floor: GET one record by id   ${f(floor.gateway_ms).padEnd(22)} ${'-'.padEnd(22)} ${f(floor.raw_ms).padEnd(18)}`,
      ...results.map(
        (r) =>
          `(${r.key}) ${r.title.padEnd(26)} ${f(r.gateway_ms).padEnd(22)} ${f(r.bare_chain_ms).padEnd(22)} ${f(r.raw_ms).padEnd(18)} ${`${r.p95_ratio} (${r.bare_chain_p95_ratio})`.padEnd(17)} ${String(r.matched.total ?? r.matched.items).padEnd(9)} ${r.verdict}`,
      ),
      '',
      `creates/s through the gateway (${clients} clients, ${createSeconds} s): without the query indexes and link table ${without.perSec} and ${without2.perSec} (p50 ${without.latency.p50} / ${without2.latency.p50} ms), with ${withIdx.perSec} and ${withIdx2.perSec} (p50 ${withIdx.latency.p50} / ${withIdx2.latency.p50} ms): ratio of the means ${createRatio} (target ≥ ${TARGET_CREATE_RATIO})`,
      '',
      ...restrictedLines(restricted, iterations),
      '',
      ...results.flatMap((r) => [`── plan (${r.key}) ${r.title} ──`, ...r.plans, '']),
      failures.length ? `MISSED: ${failures.join('; ')}` : 'every target met',
      '',
    ];
    process.stdout.write(lines.join('\n'));
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `query-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
    return failures.length ? 1 : 0;
  } finally {
    await sql.end().catch(() => {});
    bare?.stop();
    await stack?.stop();
    await deleteStreams(natsPrefix).catch(() => {});
    if (process.argv.includes('--keep-db')) log(`kept database ${db.name} (--keep-db)`);
    else await db.drop().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:query failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
