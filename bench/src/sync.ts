/**
 * `npm run bench:import -- [--shots 5000]`: a ShotGrid-shaped production imported through the gateway's
 * `POST /sync/import` (bench/README.md, "Sync import"), in one run against one stack.
 *
 *   1. The whole stack (`startBenchStack`) and an Admin API key.
 *   2. A generated production: 1 project, 20 users, 50 sequences, `--shots` shots (5,000), 8 tasks per shot
 *      (40,000, each with an assignee), 6 versions per shot (30,000, linking shot and task) and 5 notes per
 *      shot (25,000, linking version and shot): every link by external id. Items in dependency order,
 *      batches of 1,000, one request in flight.
 *   3. The same batches again: every item unchanged (nothing written).
 *   4. For comparison, the same rows (as stored) written with plain multi-row INSERTs of 1,000 into a
 *      shadow copy of `records.record` (bench_shadow) in the same database, in the same run.
 *   RSS of every service (its /metrics `process_resident_memory_bytes`) before and after.
 * Prints a table and writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase, deleteStreams, type Stack } from '@reelbase/lib-testkit';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { startBenchStack } from './bench.stack.js';
import { createShadowTables } from './shadow.schema.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:import] ${msg}\n`);
const BATCH = 1000;

type Item = { external_id: string; entity_type: string; project_external_id?: string; data: Record<string, unknown> };

/** The production, in dependency order (a batch only links to itself or earlier batches). */
export function production(shots: number): Item[] {
  const p = 'proj-1';
  const link = (type: string, id: string) => ({ type, external_id: id });
  const items: Item[] = [{ external_id: p, entity_type: 'Project', data: { name: 'Bench Show', code: `show_${Date.now().toString(36)}` } }];
  for (let u = 0; u < 20; u++)
    items.push({ external_id: `hu-${u}`, entity_type: 'User', data: { name: `Artist ${u}`, email: `artist${u}-${Date.now().toString(36)}@bench.test` } });
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
async function rss(stack: Stack): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of stack.services) {
    const ports = stack.ports[name];
    if (!ports) continue;
    const port = name === 'gateway' ? ports.ops : ports.http;
    if (!port) continue;
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      const m = /^process_resident_memory_bytes(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text);
      if (m) out[name] = Math.round(Number(m[1]) / 1048576);
    } catch {
      // a service without metrics: left out
    }
  }
  return out;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { shots: { type: 'string', default: '5000' } } });
  const shots = Number(values.shots);
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
    const batches: Item[][] = [];
    for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));
    log(`${items.length} items in ${batches.length} batches`);
    const rssBefore = await rss(stack);

    const importAll = async (expect: 'created' | 'unchanged'): Promise<{ seconds: number; slowestMs: number }> => {
      const t0 = performance.now();
      let slowest = 0;
      for (const [k, batch] of batches.entries()) {
        const b0 = performance.now();
        const res = await post(`${stack!.url}/sync/import`, fx.apiKey, { source: 'shotgrid', items: batch });
        slowest = Math.max(slowest, performance.now() - b0);
        if (res[expect] !== batch.length)
          throw new Error(`batch ${k}: expected ${batch.length} ${expect}, got ${JSON.stringify({ ...res, items: undefined })}`);
        if (k % 20 === 0) log(`${expect}: batch ${k + 1}/${batches.length}`);
      }
      return { seconds: (performance.now() - t0) / 1000, slowestMs: slowest };
    };
    const first = await importAll('created');
    const again = await importAll('unchanged');
    const rssAfter = await rss(stack);

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

    const report = {
      at: new Date().toISOString(),
      records: items.length,
      batches: batches.length,
      import_records_per_s: Math.round(items.length / first.seconds),
      import_seconds: Number(first.seconds.toFixed(1)),
      import_slowest_batch_ms: Math.round(first.slowestMs),
      reimport_records_per_s: Math.round(items.length / again.seconds),
      reimport_seconds: Number(again.seconds.toFixed(1)),
      shadow_insert_records_per_s: Math.round(rows.length / shadowSeconds),
      shadow_insert_seconds: Number(shadowSeconds.toFixed(2)),
      rss_mib_before: rssBefore,
      rss_mib_after: rssAfter,
    };
    process.stdout.write(
      [
        `sync import of a ShotGrid-shaped production: ${items.length} records, ${batches.length} batches of ${BATCH}, one in flight`,
        `  POST /sync/import (created)            ${report.import_records_per_s} records/s  (${report.import_seconds} s, slowest batch ${report.import_slowest_batch_ms} ms)`,
        `  POST /sync/import again (unchanged)    ${report.reimport_records_per_s} records/s  (${report.reimport_seconds} s, nothing written)`,
        `  multi-row INSERT into a shadow table   ${report.shadow_insert_records_per_s} records/s  (${report.shadow_insert_seconds} s, no checks, no events)`,
        `  RSS MiB before: ${JSON.stringify(rssBefore)}`,
        `  RSS MiB after:  ${JSON.stringify(rssAfter)}`,
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
