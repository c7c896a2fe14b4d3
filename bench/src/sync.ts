/**
 * `npm run bench:import -- [--shots 5000] [--rounds 3]`: a ShotGrid-shaped production imported through the gateway's
 * `POST /sync/import` (bench/README.md, "Sync import"), in one run against one stack.
 *
 *   1. The whole stack (`startBenchStack`) and an Admin API key.
 *   2. A generated production: 1 project, 20 users, 50 sequences, `--shots` shots (5,000), 8 tasks per shot
 *      (40,000, each with an assignee), 6 versions per shot (30,000, linking shot and task) and 5 notes per
 *      shot (25,000, linking version and shot): every link by external id. Items in dependency order,
 *      batches of 1,000, one request in flight.
 *   3. The same batches again: every item unchanged (nothing written).
 *   4. A second production of the same size from another source (created), and more up to `--rounds`:
 *      memory that grows with what was imported grows again in the last one; a heap that only settled
 *      after the first does not.
 *   5. The floor: with the stack stopped, one more production of the same shape (source `floor`) imported
 *      by records' own SyncImporter and SyncRepository in this process on a pool of their own (the same
 *      checks and the same statements, no gateway, gRPC, relay or event consumers), then again unchanged;
 *      the time spent in its SQL statements is counted apart.
 *   6. For comparison, the same rows (as stored) written with plain multi-row INSERTs of 1,000 into a
 *      shadow copy of `records.record` (bench_shadow) in the same database, in the same run.
 *   RSS of every service (its /metrics `process_resident_memory_bytes`) before and after each phase;
 *   targets printed PASS or MISS.
 * Prints a table and writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase, deleteStreams, type Stack } from '@reelbase/lib-testkit';
import { openDirectSyncImporter } from './sync.direct.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { startBenchStack } from './bench.stack.js';
import { createShadowTables } from './shadow.schema.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:import] ${msg}\n`);
const BATCH = 1000;
/** Targets printed PASS or MISS (records/s through the gateway on a 2-core machine). */
const TARGET_CREATE = 2000;
const TARGET_UNCHANGED = 10000;
/** Memory is flat when the last production grows a service by at most this much (MiB, or share of its RSS). */
const MEMORY_SLACK_MIB = 48;
const MEMORY_SLACK = 0.15;

type Item = { external_id: string; entity_type: string; project_external_id?: string; data: Record<string, unknown> };

/** The production, in dependency order (a batch only links to itself or earlier batches). */
export function production(shots: number, tag = ''): Item[] {
  const p = 'proj-1';
  const unique = `${Date.now().toString(36)}${tag}`;
  const link = (type: string, id: string) => ({ type, external_id: id });
  const items: Item[] = [{ external_id: p, entity_type: 'Project', data: { name: 'Bench Show', code: `show_${unique}` } }];
  for (let u = 0; u < 20; u++)
    items.push({ external_id: `hu-${u}`, entity_type: 'User', data: { name: `Artist ${u}`, email: `artist${u}-${unique}@bench.test` } });
  for (let s = 0; s < 50; s++)
    items.push({
      external_id: `seq-${s}`,
      entity_type: 'Sequence',
      project_external_id: p,
      data: { code: `sq${String(s).padStart(3, '0')}`, description: `Sequence ${s}` },
    });
  for (let s = 0; s < shots; s++) {
    items.push({
      external_id: `shot-${s}`,
      entity_type: 'Shot',
      project_external_id: p,
      data: { code: `sh${String(s).padStart(5, '0')}`, sequence: link('Sequence', `seq-${s % 50}`), cut_in: 1001, cut_out: 1001 + (s % 200) },
    });
  }
  const steps = ['layout', 'anim', 'fx', 'lighting', 'comp', 'roto', 'paint', 'matchmove'];
  for (let s = 0; s < shots; s++) {
    for (const [k, step] of steps.entries()) {
      items.push({
        external_id: `task-${s}-${k}`,
        entity_type: 'Task',
        project_external_id: p,
        data: { name: step, entity: link('Shot', `shot-${s}`), assignees: [link('User', `hu-${(s + k) % 20}`)], estimate_minutes: 240 },
      });
    }
  }
  for (let s = 0; s < shots; s++) {
    for (let v = 0; v < 6; v++) {
      items.push({
        external_id: `ver-${s}-${v}`,
        entity_type: 'Version',
        project_external_id: p,
        data: {
          code: `sh${String(s).padStart(5, '0')}_v${String(v + 1).padStart(3, '0')}`,
          entity: link('Shot', `shot-${s}`),
          task: link('Task', `task-${s}-${v % 8}`),
        },
      });
    }
  }
  for (let s = 0; s < shots; s++) {
    for (let n = 0; n < 5; n++) {
      items.push({
        external_id: `note-${s}-${n}`,
        entity_type: 'Note',
        project_external_id: p,
        data: {
          subject: `Notes on v${n + 1}`,
          content: 'Tighten the timing on the hit; edge of the matte is soft.',
          links: [link('Version', `ver-${s}-${n}`), link('Shot', `shot-${s}`)],
        },
      });
    }
  }
  return items;
}

async function post(url: string, token: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** RSS in MiB of each service, from its /metrics. */
/** Resident and V8 heap-used MiB of every service (its /metrics). */
interface Memory {
  rss: Record<string, number>;
  heap: Record<string, number>;
  /** V8's heap as reserved, and memory outside it held by JS objects (Buffers). */
  heapTotal: Record<string, number>;
  external: Record<string, number>;
  /** Pages freed with MADV_FREE that the kernel has not taken back yet: counted in RSS, reclaimable (Linux). */
  lazyFree: Record<string, number>;
}

/** LazyFree MiB of a process (Linux /proc/<pid>/smaps_rollup), when readable. */
async function lazyFreeMib(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const m = /^LazyFree:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

async function memory(stack: Stack): Promise<Memory> {
  const out: Memory = { rss: {}, heap: {}, heapTotal: {}, external: {}, lazyFree: {} };
  const mib = (text: string, metric: string): number | undefined => {
    const m = new RegExp(`^${metric}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
    return m ? Math.round(Number(m[1]) / 1048576) : undefined;
  };
  for (const name of stack.services) {
    const ports = stack.ports[name];
    if (!ports) continue;
    const port = name === 'gateway' ? ports.ops : ports.http;
    if (!port) continue;
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      const rss = mib(text, 'process_resident_memory_bytes');
      const heap = mib(text, 'nodejs_heap_size_used_bytes');
      const heapTotal = mib(text, 'nodejs_heap_size_total_bytes');
      const external = mib(text, 'nodejs_external_memory_bytes');
      if (rss !== undefined) out.rss[name] = rss;
      if (heap !== undefined) out.heap[name] = heap;
      if (heapTotal !== undefined) out.heapTotal[name] = heapTotal;
      if (external !== undefined) out.external[name] = external;
      const lazy = await lazyFreeMib(stack.pid(name));
      if (lazy !== undefined) out.lazyFree[name] = lazy;
    } catch {
      // a service without metrics: left out
    }
  }
  return out;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { shots: { type: 'string', default: '5000' }, rounds: { type: 'string', default: '3' } } });
  const shots = Number(values.shots);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 2) throw new Error(`--rounds needs a whole number of at least 2, got ${values.rounds}`);
  if (!Number.isInteger(shots) || shots < 10) throw new Error(`--shots needs a whole number of at least 10, got ${values.shots}`);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-import-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = `benchsy_${Date.now().toString(36)}_`;
  let stack: Stack | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  try {
    log(`starting the stack (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({ databaseUrl: db.url, natsPrefix, logDir: join(dir, 'logs'), log });
    const fx = await bootstrapGateway(stack.url);
    const items = production(shots);
    const batchesOf = (list: Item[]): Item[][] => {
      const out: Item[][] = [];
      for (let i = 0; i < list.length; i += BATCH) out.push(list.slice(i, i + BATCH));
      return out;
    };
    const batches = batchesOf(items);
    log(`${items.length} items in ${batches.length} batches`);
    const memBefore = await memory(stack);
    const loadBefore = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');

    const importAll = async (source: string, list: Item[][], expect: 'created' | 'unchanged'): Promise<{ seconds: number; slowestMs: number }> => {
      const t0 = performance.now();
      let slowest = 0;
      for (const [k, batch] of list.entries()) {
        const b0 = performance.now();
        const res = await post(`${stack!.url}/sync/import`, fx.apiKey, { source, items: batch });
        slowest = Math.max(slowest, performance.now() - b0);
        if (res[expect] !== batch.length)
          throw new Error(`batch ${k}: expected ${batch.length} ${expect}, got ${JSON.stringify({ ...res, items: undefined })}`);
        if (k % 20 === 0) log(`${source} ${expect}: batch ${k + 1}/${list.length}`);
      }
      return { seconds: (performance.now() - t0) / 1000, slowestMs: slowest };
    };
    const first = await importAll('shotgrid', batches, 'created');
    const memFirst = await memory(stack);
    const again = await importAll('shotgrid', batches, 'unchanged');
    const memAgain = await memory(stack);
    // A second production of the same size from another source: memory that keeps growing with the
    // records imported grows again here; memory that is only the heap settling does not.
    const second = await importAll('shotgrid-b', batchesOf(production(shots, 'b')), 'created');
    const memRounds = [memFirst, await memory(stack)];
    // --rounds N: N productions in all; memory is judged on the last one.
    let lastSeconds = second.seconds;
    for (let round = 3; round <= rounds; round += 1) {
      lastSeconds = (await importAll(`shotgrid-${round}`, batchesOf(production(shots, `r${round}`)), 'created')).seconds;
      memRounds.push(await memory(stack));
    }
    const memSecond = memRounds.at(-1)!;
    const memPrevious = memRounds.at(-2)!;
    const lastRound = rounds > 2 ? lastSeconds : second.seconds;

    // The floor: the stack stopped (no relay publishing, no consumers), the same import in this process.
    await stack.stop();
    stack = undefined;
    const direct = openDirectSyncImporter({ databaseUrl: db.url, natsPrefix });
    const ctx = { requestId: 'bench-floor', principal: { userId: fx.userId, role: 'Admin' as const, authKind: 'api_key' as const } };
    const floorBatches = batchesOf(production(shots, 'floor'));
    const directAll = async (expect: 'created' | 'unchanged'): Promise<{ seconds: number; sqlSeconds: number; sqlSecondsBy: Record<string, number> }> => {
      const t0 = performance.now();
      const sql0 = direct.sqlMs;
      const by0 = new Map(direct.sqlMsBy);
      for (const [k, batch] of floorBatches.entries()) {
        const res = await direct.import(JSON.stringify({ source: 'floor', items: batch }), ctx);
        if (res[expect] !== batch.length) throw new Error(`floor batch ${k}: expected ${batch.length} ${expect}, got ${res[expect]}`);
      }
      const sqlSecondsBy: Record<string, number> = {};
      for (const [name, ms] of direct.sqlMsBy) sqlSecondsBy[name] = Number(((ms - (by0.get(name) ?? 0)) / 1000).toFixed(2));
      return { seconds: (performance.now() - t0) / 1000, sqlSeconds: (direct.sqlMs - sql0) / 1000, sqlSecondsBy };
    };
    let floorCreate: Awaited<ReturnType<typeof directAll>>;
    let floorAgain: Awaited<ReturnType<typeof directAll>>;
    try {
      floorCreate = await directAll('created');
      floorAgain = await directAll('unchanged');
    } finally {
      await direct.close();
    }

    // The same rows, as stored, with plain multi-row INSERTs into a shadow copy of the record table.
    await sql.connect();
    await createShadowTables(db.url);
    const rows = (
      await sql.query<{ id: string; entity_type: string; project_id: string | null; created_by: string | null; data: unknown }>(
        `select id, entity_type, project_id, created_by, data from records.record where id in (select id from records.sync_mapping where source = 'shotgrid')`,
      )
    ).rows;
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += BATCH) {
      const chunk = rows.slice(i, i + BATCH);
      const params: unknown[] = [];
      const values = chunk.map((r, k) => {
        params.push(r.id, r.entity_type, r.project_id, r.created_by, JSON.stringify(r.data));
        const b = k * 5;
        return `($${b + 1}::uuid, $${b + 2}, $${b + 3}::uuid, true, $${b + 4}::uuid, clock_timestamp(), clock_timestamp(), $${b + 5}::jsonb)`;
      });
      await sql.query(
        `insert into bench_shadow.record (id, entity_type, project_id, active, created_by, created_at, updated_at, data) values ${values.join(',')}`,
        params,
      );
    }
    const shadowSeconds = (performance.now() - t0) / 1000;

    // Flat: the last production grows no service by more than MEMORY_SLACK of what it held before it.
    const growth: Record<string, number> = {};
    for (const [name, mib] of Object.entries(memSecond.rss)) growth[name] = mib - (memPrevious.rss[name] ?? mib);
    const grew = Object.entries(growth).filter(([name, mib]) => mib > Math.max(MEMORY_SLACK_MIB, MEMORY_SLACK * (memPrevious.rss[name] ?? 0)));
    const report = {
      at: new Date().toISOString(),
      records: items.length,
      batches: batches.length,
      import_records_per_s: Math.round(items.length / first.seconds),
      import_seconds: Number(first.seconds.toFixed(1)),
      import_slowest_batch_ms: Math.round(first.slowestMs),
      reimport_records_per_s: Math.round(items.length / again.seconds),
      reimport_seconds: Number(again.seconds.toFixed(1)),
      second_import_records_per_s: Math.round(items.length / second.seconds),
      last_import_records_per_s: Math.round(items.length / lastRound),
      floor_import_records_per_s: Math.round(items.length / floorCreate.seconds),
      floor_import_sql_records_per_s: Math.round(items.length / floorCreate.sqlSeconds),
      floor_reimport_records_per_s: Math.round(items.length / floorAgain.seconds),
      floor_reimport_sql_records_per_s: Math.round(items.length / floorAgain.sqlSeconds),
      floor_import_sql_seconds_by_statement: floorCreate.sqlSecondsBy,
      floor_reimport_sql_seconds_by_statement: floorAgain.sqlSecondsBy,
      shadow_insert_records_per_s: Math.round(rows.length / shadowSeconds),
      shadow_insert_seconds: Number(shadowSeconds.toFixed(2)),
      memory_mib_before: memBefore,
      memory_mib_after_first: memFirst,
      memory_mib_after_reimport: memAgain,
      memory_mib_after_each_production: memRounds,
      rss_mib_growth_last_production: growth,
    };
    const mark = (ok: boolean) => (ok ? 'PASS' : 'MISS');
    process.stdout.write(
      [
        `sync import of a ShotGrid-shaped production: ${items.length} records, ${batches.length} batches of ${BATCH}, one in flight`,
        `  load average (1, 5, 15 min) at the start: ${loadBefore}; at the end: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
        `  POST /sync/import (created)            ${report.import_records_per_s} records/s  (${report.import_seconds} s, slowest batch ${report.import_slowest_batch_ms} ms)  target ≥ ${TARGET_CREATE}: ${mark(report.import_records_per_s >= TARGET_CREATE)}`,
        `  POST /sync/import again (unchanged)    ${report.reimport_records_per_s} records/s  (${report.reimport_seconds} s, nothing written)  target ≥ ${TARGET_UNCHANGED}: ${mark(report.reimport_records_per_s >= TARGET_UNCHANGED)}`,
        `  a second production (created)          ${report.second_import_records_per_s} records/s`,
        `  production ${rounds} (created)               ${report.last_import_records_per_s} records/s`,
        `  floor, in process (created)            ${report.floor_import_records_per_s} records/s  (records' checks and SQL, no gateway/gRPC/relay/consumers; its SQL alone ${report.floor_import_sql_records_per_s} records/s)`,
        `  floor, in process (unchanged)          ${report.floor_reimport_records_per_s} records/s  (its SQL alone ${report.floor_reimport_sql_records_per_s} records/s)`,
        `  floor SQL seconds by statement: created ${JSON.stringify(floorCreate.sqlSecondsBy)}; unchanged ${JSON.stringify(floorAgain.sqlSecondsBy)}`,
        `  gateway / floor: created ${(report.last_import_records_per_s / report.floor_import_records_per_s).toFixed(2)} (production ${rounds} vs floor, same table size), unchanged ${(report.reimport_records_per_s / report.floor_reimport_records_per_s).toFixed(2)}; gateway / floor SQL: created ${(report.last_import_records_per_s / report.floor_import_sql_records_per_s).toFixed(2)}, unchanged ${(report.reimport_records_per_s / report.floor_reimport_sql_records_per_s).toFixed(2)}`,
        `  multi-row INSERT into a shadow table   ${report.shadow_insert_records_per_s} records/s  (${report.shadow_insert_seconds} s, no checks, no events)`,
        `  RSS MiB before:                 ${JSON.stringify(memBefore.rss)}`,
        `  RSS MiB after the first import: ${JSON.stringify(memFirst.rss)}`,
        `  RSS MiB after the re-import:    ${JSON.stringify(memAgain.rss)}`,
        ...memRounds.slice(1).map((m, k) => `  RSS MiB after production ${k + 2}:   ${JSON.stringify(m.rss)}`),
        `  heap used MiB, same points:     ${[memBefore, memFirst, memAgain, memSecond].map((m) => JSON.stringify(m.heap)).join(' → ')}`,
        `  heap total MiB, same points:    ${[memBefore, memFirst, memAgain, memSecond].map((m) => JSON.stringify(m.heapTotal)).join(' → ')}`,
        `  external MiB, same points:      ${[memBefore, memFirst, memAgain, memSecond].map((m) => JSON.stringify(m.external)).join(' → ')}`,
        `  LazyFree MiB (in RSS, reclaimable), same points: ${[memBefore, memFirst, memAgain, memSecond].map((m) => JSON.stringify(m.lazyFree)).join(' → ')}`,
        `  memory flat (production ${memRounds.length} grows no service by more than ${MEMORY_SLACK_MIB} MiB or ${MEMORY_SLACK * 100}%): ${mark(grew.length === 0)}${grew.length ? ` (${grew.map(([n, m]) => `${n} +${m}`).join(', ')})` : ''}`,
        '',
      ].join('\n'),
    );
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `import-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
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
    process.stderr.write(`bench:import failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
