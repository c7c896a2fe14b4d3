/**
 * `npm run bench:lone -- [--n 200] [--rounds 2] [--pause 0] [--kill events,notifier] [--env K=V,…]`: where a lone
 * create's milliseconds go (bench/README.md, "One create at a time"). One client, one request in
 * flight: creates through the gateway and through the bare write chain, alternating in rounds of
 * `--n`, each timed by the client; the services' own latency histograms (the gateway's gRPC call to
 * records, records' handler) read before and after give the split. `--kill` stops services of the
 * stack before the measured rounds (those the write does not wait for), to show what the work they
 * do after each write costs the next one; `--pause` waits that many ms between creates.
 */
import http from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, deleteStreams, uniquePrefix } from '@reelbase/lib-testkit';
import { prepareBareWriteDatabase, startBareChain, WRITE_POOL_MAX } from './bare.chain.js';
import { startBenchStack } from './bench.stack.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { gcPauses, histogramTotals, meansBetween } from './metrics.scrape.js';
import { cpuBetween, cpuSnapshot, stackCpuGroups } from './proc.cpu.js';
import { summarize } from './stats.js';

const log = (s: string) => process.stderr.write(`${s}\n`);
const num = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? d : Number(process.argv[i + 1]);
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let seq = 0;
function create(base: string, token: string | null, projectId: string): Promise<number> {
  const body = JSON.stringify({ project_id: projectId, data: { code: `P${process.pid}_${seq++}` } });
  const u = new URL('/entities/Shot', base);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      {
        agent,
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode! < 300 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const n = num('n', 300);
  const rounds = num('rounds', 3);
  const pause = num('pause', 0);
  log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-probe-'));
  const db = await createTestDatabase(undefined, 'rb_probe');
  const natsPrefix = uniquePrefix('probe');
  // `--env K=V,K=V`: settings for every service of the stack (to compare one setting's two values).
  const envIdx = process.argv.indexOf('--env');
  const env =
    envIdx > 0 ? Object.fromEntries(process.argv[envIdx + 1]!.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) : {};
  const stack = await startBenchStack({ databaseUrl: db.url, natsPrefix, logDir: join(dir, 'logs'), log, env });
  const bareDb = await createTestDatabase(undefined, 'rb_probe_bare');
  let bare: Awaited<ReturnType<typeof startBareChain>> | undefined;
  try {
    const fx = await bootstrapGateway(stack.url);
    await prepareBareWriteDatabase(bareDb.url, fx.projectId, fx.userId);
    bare = await startBareChain(bareDb.url, { pool: WRITE_POOL_MAX, actor: fx.userId });
    const killIdx = process.argv.indexOf('--kill');
    if (killIdx > 0) for (const name of process.argv[killIdx + 1]!.split(',')) await stack.kill(name);
    const gwOps = stack.ports.gateway!.ops!;
    const recOps = stack.ports.records!.http;
    const times: Record<string, number[]> = { gateway: [], bare: [] };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    for (let i = 0; i < 50; i++) {
      await create(stack.url, fx.apiKey, fx.projectId);
      await create(bare!.url, null, fx.projectId);
    }
    const groups = stackCpuGroups(stack, { 'bare http': [bare.pids.http], 'bare grpc': [bare.pids.grpc] });
    const cpu: Record<string, Map<string, number>> = { gateway: new Map(), bare: new Map() };
    const g0 = await histogramTotals(gwOps);
    const r0 = await histogramTotals(recOps);
    const gc0 = { gateway: await gcPauses(gwOps), records: await gcPauses(recOps) };
    for (let r = 0; r < rounds; r++) {
      for (const who of r % 2 ? ['bare', 'gateway'] : ['gateway', 'bare']) {
        const c0 = cpuSnapshot(groups);
        const from = process.hrtime.bigint() / 1000n;
        for (let i = 0; i < n; i++) {
          times[who]!.push(who === 'gateway' ? await create(stack.url, fx.apiKey, fx.projectId) : await create(bare!.url, null, fx.projectId));
          if (pause) await sleep(pause);
        }
        // Work the creates set going (the relay, the log's append) ends a little after the last answer.
        await sleep(50);
        for (const [name, ms] of cpuBetween(c0, cpuSnapshot(groups))) cpu[who]!.set(name, (cpu[who]!.get(name) ?? 0) + ms);
        // The monotonic clock in µs, as V8's CPU profiles time their samples (REELBASE_CPU_PROF_DIR).
        if (process.env.REELBASE_CPU_PROF_DIR) log(`window ${who} ${from} ${process.hrtime.bigint() / 1000n}`);
      }
    }
    const g1 = await histogramTotals(gwOps);
    const r1 = await histogramTotals(recOps);
    const gc1 = { gateway: await gcPauses(gwOps), records: await gcPauses(recOps) };
    for (const who of ['gateway', 'records'] as const) {
      const line = [...gc1[who]].map(([kind, a]) => {
        const b = gc0[who].get(kind) ?? { count: 0, over10ms: 0 };
        return `${kind} ${a.count - b.count} (${a.over10ms - b.over10ms} over 10 ms)`;
      });
      log(`${who} garbage collections during the rounds: ${line.join(', ')}`);
    }
    for (const [k, v] of Object.entries(times)) {
      const s = summarize(v);
      log(`${k}: n ${s.count} p50 ${s.p50.toFixed(2)} p90 ${s.p90.toFixed(2)} p99 ${s.p99.toFixed(2)} mean ${s.mean.toFixed(2)} ms`);
    }
    log('CPU ms per create, by process (the rounds of each contender, /proc):');
    for (const [who, m] of Object.entries(cpu)) {
      const per = [...m].filter(([, ms]) => ms > 0).map(([name, ms]) => [name, ms / times[who]!.length] as const);
      const total = per.reduce((a, [, v]) => a + v, 0);
      log(`  ${who}: total ${total.toFixed(2)} — ${per.map(([name, v]) => `${name} ${v.toFixed(2)}`).join(', ')}`);
    }
    log('gateway:');
    for (const l of meansBetween(g0, g1)) log(`  ${l}`);
    log('records:');
    for (const l of meansBetween(r0, r1)) log(`  ${l}`);
    log(
      `load ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    bare?.stop();
    await stack.stop();
    await deleteStreams(natsPrefix).catch(() => {});
    await db.drop().catch(() => {});
    await bareDb.drop().catch(() => {});
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    log(String((err as Error).stack ?? err));
    process.exit(1);
  },
);
