/**
 * `npm run bench:addons -- [--reads 1000]`: resolved addon settings read through the gateway
 * (bench/README.md, "Addon settings"), in one run against one stack.
 *
 *   1. The whole stack (`startStack`), an addon with a settings schema of 40 settings (nested
 *      objects, enums, bounds, patterns), a studio layer, a project layer and a pin.
 *   2. `GET /addons/{name}/settings?project_id=` `--reads` times, one at a time over one
 *      keep-alive connection: p50/p99 with the compiled validator cached in the schema service.
 *   3. For comparison, side by side with the reads of step 2 (blocks of 50 in turn): the studio's
 *      settings (no `project_id`, so no lookup of the project in records), the raw SQL
 *      of one read (the statement the schema service runs, on a `pg` client of this process), and,
 *      in this process, the resolution with the validator cached against the same resolution
 *      compiling the validator every time (a cold cache).
 * Prints a table and writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createTestDatabase, deleteStreams, type Stack } from '@reelbase/lib-testkit';
import { ADDON_SETTINGS_SQL, ValidatorCache, compileSettings, resolveSettings } from '@reelbase/schema';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { alternate, summarize, type LatencySummary } from './stats.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:addons] ${msg}\n`);

/** A settings schema of the size a pipeline addon has: 40 settings in four groups. */
function benchSchema(): { schema: Record<string, unknown>; defaults: Record<string, unknown> } {
  const groups = ['publish', 'render', 'review', 'farm'];
  const properties: Record<string, unknown> = {};
  const defaults: Record<string, unknown> = {};
  for (const g of groups) {
    const props: Record<string, unknown> = {};
    const d: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) {
      const kind = i % 5;
      const key = `${g}_${i}`;
      if (kind === 0) ((props[key] = { type: 'integer', minimum: 0, maximum: 10_000 }), (d[key] = i * 10));
      else if (kind === 1) ((props[key] = { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 64 }), (d[key] = `v${i}`));
      else if (kind === 2) ((props[key] = { type: 'string', enum: ['low', 'medium', 'high'] }), (d[key] = 'medium'));
      else if (kind === 3) ((props[key] = { type: 'boolean' }), (d[key] = false));
      else ((props[key] = { type: 'array', items: { type: 'string' } }), (d[key] = ['a', 'b']));
    }
    properties[g] = { type: 'object', required: [`${g}_0`], properties: props };
    defaults[g] = d;
  }
  return { schema: { type: 'object', required: groups, properties }, defaults };
}

async function call(url: string, method: string, token: string, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { reads: { type: 'string', default: '1000' } } });
  const reads = Number(values.reads);
  if (!Number.isInteger(reads) || reads < 50) throw new Error(`--reads needs a whole number of at least 50, got ${values.reads}`);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-addons-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = `benchad_${Date.now().toString(36)}_`;
  let stack: Stack | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  try {
    log(`starting the stack (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({ databaseUrl: db.url, natsPrefix, logDir: join(dir, 'logs'), log });
    const fx = await bootstrapGateway(stack.url);
    const { schema, defaults } = benchSchema();
    const base = `${stack.url}/addons/bench`;
    await call(`${base}/versions/1.0.0`, 'PUT', fx.apiKey, { title: 'Bench', settings_schema: schema, defaults });
    await call(`${base}/versions/1.1.0`, 'PUT', fx.apiKey, { title: 'Bench 1.1', settings_schema: schema, defaults });
    const studio = { publish: { publish_1: 'studio_root', publish_4: ['exr'] }, render: { render_0: 400 } };
    const project = { render: { render_2: 'high', render_3: true }, farm: { farm_0: 12 } };
    await call(`${base}/settings`, 'PUT', fx.apiKey, studio);
    await call(`${base}/pin?project_id=${fx.projectId}`, 'PUT', fx.apiKey, { version: '1.1.0' });
    await call(`${base}/settings?project_id=${fx.projectId}`, 'PUT', fx.apiKey, project);
    const readUrl = `${base}/settings?project_id=${fx.projectId}`;
    const first = (await call(readUrl, 'GET', fx.apiKey)) as { version: string; sources: Record<string, string> };
    log(`resolved ${Object.keys(first.sources).length} leaves of version ${first.version}; ${reads} reads of each kind`);

    await sql.connect();
    const sqlArgs = ['bench', 'bench', fx.projectId, fx.projectId, null];
    // Knex's `?` placeholders as pg's `$n`.
    let n = 0;
    const text = ADDON_SETTINGS_SQL.replace(/\?/g, () => `$${++n}`);
    const row = (await sql.query(text, sqlArgs)).rows[0] as Record<string, unknown>;
    const layers = [
      { source: 'studio' as const, overrides: row.studio as never },
      { source: 'project' as const, overrides: row.project as never },
    ];
    const cache = new ValidatorCache();
    const warmResolve = () => resolveSettings(row.defaults as never, layers, cache.get('bench', '1.1.0', String(row.digest), row.settings_schema as never));
    const coldResolve = () => resolveSettings(row.defaults as never, layers, compileSettings(row.settings_schema as never));

    const gateway: number[] = [];
    const studioOnly: number[] = [];
    const rawSql: number[] = [];
    const warm: number[] = [];
    const cold: number[] = [];
    await alternate(reads, [
      { into: gateway, run: () => call(readUrl, 'GET', fx.apiKey) },
      { into: studioOnly, run: () => call(`${base}/settings`, 'GET', fx.apiKey) },
      { into: rawSql, run: () => sql.query(text, sqlArgs) },
      { into: warm, run: async () => warmResolve() },
      { into: cold, run: async () => coldResolve() },
    ]);
    const s = {
      gateway: summarize(gateway),
      gateway_studio: summarize(studioOnly),
      raw_sql: summarize(rawSql),
      resolve_cached: summarize(warm),
      resolve_cold: summarize(cold),
    };
    const fmt = (x: LatencySummary) => `p50 ${x.p50.toFixed(3)} ms  p99 ${x.p99.toFixed(3)} ms  mean ${x.mean.toFixed(3)} ms  (${x.count})`;
    process.stdout.write(
      [
        `addon settings, ${Object.keys(first.sources).length} leaves, studio + project layers, pinned version (${reads} reads each, side by side):`,
        `  GET /addons/{name}/settings?project_id=  (validator cached)  ${fmt(s.gateway)}`,
        `  GET /addons/{name}/settings (studio; no project lookup)   ${fmt(s.gateway_studio)}`,
        `  raw SQL of one read (pg, this process)                  ${fmt(s.raw_sql)}`,
        `  resolve in process, validator cached                   ${fmt(s.resolve_cached)}`,
        `  resolve in process, validator compiled (cold cache)    ${fmt(s.resolve_cold)}`,
        '',
      ].join('\n'),
    );
    const report = { at: new Date().toISOString(), reads, leaves: Object.keys(first.sources).length, ...s };
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `addons-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
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
    process.stderr.write(`bench:addons failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
