/**
 * `node bench/dist/query.loop.js --db <name> [--shapes 0,a,b,a1,af] [--iterations 1000] [--cpu-prof <dir>] [--client fetch]`:
 * one query shape of bench:query at a time, in a loop, on a database an earlier
 * `npm run bench:query -- --keep-db` seeded and kept (no seed, no index builds, no creates), so a
 * change to the request path can be measured in a minute. With `--cpu-prof`, the gateway and
 * records run with `node --cpu-prof` and write their profiles to that folder when the stack stops.
 * Prints p50 / p95 / p99 per shape of a loop through the gateway, the CPU time per request of
 * the gateway, records and this process (utime + stime of /proc/<pid>/stat over the gateway loop),
 * and where a request's time goes: the mean of the gateway's HTTP and gRPC-client histograms and of
 * records' gRPC-server histogram over the loop (their `/metrics`); then the gateway, the bare chain
 * (bare.chain.ts) and raw in alternating blocks of 50. The gateway is timed with the keep-alive
 * client of http.client.ts, or with `fetch` given `--client fetch`.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { deleteStreams, uniquePrefix, withDatabase, type Stack } from '@reelbase/lib-testkit';
import { core, kernel } from '@reelbase/records';

const { compileSchema } = kernel;
const { planQuery, runQueryPlan } = core;
type QueryPlan = core.QueryPlan;
type SchemaSnapshot = kernel.SchemaSnapshot;
import { alternate, percentile } from './stats.js';
import { startBenchStack } from './bench.stack.js';
import { histogramTotals, meansBetween, type SeriesTotals } from './metrics.scrape.js';
import { LeanClient } from './http.client.js';
import { startBareChain, type BareChain } from './bare.chain.js';

const log = (msg: string): void => void process.stderr.write(`[bench:query-loop] ${msg}\n`);

function opt(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

const f = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return [50, 95, 99].map((p) => percentile(s, p).toFixed(2)).join(' / ');
};

/** CPU time (user + system) of a process so far, in ms. */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line (11 and 12 after the command), in clock ticks (100 Hz).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function post(url: string, path: string, body: unknown, token?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(new URL(path, url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

async function main(): Promise<void> {
  const dbName = opt('db');
  if (!dbName) throw new Error('--db <name of a database kept by bench:query --keep-db> is required');
  const shapes = (opt('shapes') ?? '0,a,b').split(',');
  const iterations = Number(opt('iterations') ?? 1000);
  const profDir = opt('cpu-prof');
  const url = withDatabase(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', dbName);
  const sql = new pg.Client({ connectionString: url });
  await sql.connect();
  // The bench user registered by bench:query (gateway.bootstrap.ts): its password follows from its address.
  const user = await sql.query<{ email: string }>(
    "select data->>'email' as email from records.record where entity_type = 'User' and data->>'email' like 'bench-%@example.com' limit 1",
  );
  const email = user.rows[0]?.email;
  if (!email) throw new Error(`${dbName} has no bench user: seed it with bench:query --keep-db`);
  const password = `bench-password-${email.slice('bench-'.length, email.indexOf('@'))}`;
  const natsPrefix = uniquePrefix('benchql');
  // `--node-options "<flags>"`: extra Node flags for the gateway and records (GC settings, say).
  const flags = [...(profDir ? [`--cpu-prof --cpu-prof-dir=${resolve(profDir)}`] : []), ...(opt('node-options') ? [opt('node-options')!] : [])];
  const nodeOptions = flags.length ? { NODE_OPTIONS: flags.join(' ') } : undefined;
  let stack: Stack | undefined;
  let bare: BareChain | undefined;
  try {
    bare = await startBareChain(url);
    stack = await startBenchStack({
      databaseUrl: url,
      natsPrefix,
      logDir: join(await mkdtemp(join(tmpdir(), 'reelbase-bench-qloop-')), 'logs'),
      ...(nodeOptions ? { serviceEnv: { gateway: nodeOptions, records: nodeOptions } } : {}),
      log,
    });
    const login = await post(stack.url, '/auth/login', { email, password });
    if (login.status !== 200) throw new Error(`login answered ${login.status}`);
    const key = await post(stack.url, '/auth/api-keys', { name: 'bench-loop' }, login.json.access_token as string);
    const token = key.json.token as string;

    const show = await sql.query<{ id: string }>("select id from records.record where entity_type = 'Project' and data->>'code' = 'show01'");
    const projectId = show.rows[0]!.id;
    const seq = await sql.query<{ code: string }>(
      "select data->>'code' as code from records.record where entity_type = 'Sequence' and project_id = $1 order by data->>'code' limit 3",
      [projectId],
    );
    const one = await sql.query<{ id: string }>("select id from records.record where entity_type = 'Task' and project_id = $1 limit 1", [projectId]);
    const snap = await sql.query<{ version: string; snapshot: SchemaSnapshot }>('select version, snapshot from records.schema_state where id = 1');
    const schema = compileSchema(Number(snap.rows[0]!.version), snap.rows[0]!.snapshot);
    const a = [
      ['project_id', 'is', projectId],
      ['status', 'is', 'ip'],
    ];
    const bodies: Record<string, { filters: unknown[]; limit: number; fields?: string[] }> = {
      a: { filters: a, limit: 50 },
      // (a) with one record, and with 50 records without their data: what the page's size costs.
      a1: { filters: a, limit: 1 },
      af: { filters: a, limit: 50, fields: [] },
      b: {
        filters: [
          ['project_id', 'is', projectId],
          ['entity.Shot.sequence.Sequence.code', 'is', (seq.rows[2] ?? seq.rows[0])!.code],
        ],
        limit: 50,
      },
    };
    const lean = new LeanClient(stack.url);
    const bareClient = new LeanClient(bare.url);
    const useFetch = opt('client') === 'fetch';
    for (const shape of shapes) {
      const gateway: number[] = [];
      let request: () => Promise<{ status: number }>;
      let runRaw: () => Promise<unknown>;
      let runBare: (() => Promise<{ status: number }>) | undefined;
      if (shape === '0') {
        request = useFetch
          ? async () => {
              const res = await fetch(new URL(`/entities/Task/${one.rows[0]!.id}`, stack!.url), { headers: { authorization: `Bearer ${token}` } });
              await res.arrayBuffer();
              return res;
            }
          : () => lean.request('GET', `/entities/Task/${one.rows[0]!.id}`, { authorization: `Bearer ${token}` });
        runRaw = () => sql.query('select * from records.record where id = $1', [one.rows[0]!.id]);
      } else {
        const body = bodies[shape];
        if (!body) throw new Error(`no shape ${shape}`);
        request = useFetch
          ? async () => {
              const res = await fetch(new URL('/entities/Task/query', stack!.url), {
                method: 'POST',
                headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
                body: JSON.stringify(body),
              });
              await res.arrayBuffer();
              return res;
            }
          : () => lean.request('POST', '/entities/Task/query', { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, JSON.stringify(body));
        const { plan } = planQuery(schema, {
          entityType: 'Task',
          filtersJson: JSON.stringify(body.filters),
          limit: body.limit,
          ...(body.fields ? { fieldsJson: JSON.stringify(body.fields) } : {}),
        });
        // Every statement records runs for it, in order (runQueryPlan).
        const run: QueryPlan = { ...plan, limit: plan.limit + 1 };
        runRaw = () => runQueryPlan(sql, run);
        const planText = JSON.stringify(run);
        runBare = () => bareClient.request('POST', '/', { 'content-type': 'application/json' }, planText);
      }
      const pids = { gateway: stack.pid('gateway')!, records: stack.pid('records')!, bench: process.pid };
      // What each process spends while no request arrives (timers, probes, the event feed), per ms.
      const idle: Record<string, number> = {};
      for (const [k, pid] of Object.entries(pids)) idle[k] = await cpuMs(pid);
      const idleFrom = performance.now();
      await new Promise((r) => setTimeout(r, 3000));
      const idleMs = performance.now() - idleFrom;
      for (const [k, pid] of Object.entries(pids)) idle[k] = ((await cpuMs(pid)) - idle[k]!) / idleMs;
      let before: Record<string, number> = {};
      let loopFrom = 0;
      const opsPorts = [stack.ports.gateway!.ops!, stack.ports.records!.http];
      let histBefore: Map<string, SeriesTotals>[] = [];
      for (let i = 0; i < iterations + 20; i++) {
        if (i === 20) {
          histBefore = await Promise.all(opsPorts.map((p) => histogramTotals(p)));
          for (const [k, pid] of Object.entries(pids)) before[k] = await cpuMs(pid);
          loopFrom = performance.now();
        }
        const s = performance.now();
        const res = await request();
        if (res.status !== 200) throw new Error(`(${shape}) answered ${res.status}`);
        if (i >= 20) gateway.push(performance.now() - s);
      }
      const loopMs = performance.now() - loopFrom;
      const cpu: string[] = [];
      for (const [k, pid] of Object.entries(pids)) {
        const used = (await cpuMs(pid)) - before[k]! - idle[k]! * loopMs;
        cpu.push(`${k} ${(used / iterations).toFixed(2)} ms (idle ${(idle[k]! * 100).toFixed(1)}% of a core)`);
      }
      const histAfter = await Promise.all(opsPorts.map((p) => histogramTotals(p)));
      const spent = histAfter.flatMap((after, i) => meansBetween(histBefore[i]!, after).map((l) => `    ${l}`));
      // Then the three side by side, in alternating blocks of 50, so a drift of the machine favours none.
      const ok = (run: () => Promise<{ status: number }>) => async () => {
        const res = await run();
        if (res.status !== 200) throw new Error(`(${shape}) answered ${res.status}`);
      };
      const side = { gateway: [] as number[], bare: [] as number[], raw: [] as number[] };
      await alternate(iterations, [
        { into: side.gateway, run: ok(request) },
        ...(runBare ? [{ into: side.bare, run: ok(runBare) }] : []),
        { into: side.raw, run: runRaw },
      ]);
      process.stdout.write(
        `(${shape}) ${useFetch ? 'fetch' : 'lean'} gateway ${f(gateway)}   (ms p50 / p95 / p99, ${iterations} samples); CPU per request: ${cpu.join(', ')}\n${spent.join('\n')}\n` +
          `    alternating blocks: gateway ${f(side.gateway)}   bare chain ${runBare ? f(side.bare) : '-'}   raw ${f(side.raw)}\n`,
      );
    }
    lean.close();
    bareClient.close();
  } finally {
    await sql.end().catch(() => {});
    bare?.stop();
    await stack?.stop();
    await deleteStreams(natsPrefix).catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench:query-loop failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
