/**
 * `npm run bench`: record creates through the gateway against pgbench and a minimal
 * Express + pg baseline, in one run against one database, then write → WebSocket latency
 * at a fixed rate. Prints a table and PASS/MISS against the targets and writes the same as
 * JSON to bench/results/. Exits non-zero only when something failed to run.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { parseBenchArgs, USAGE, type BenchOptions } from './bench.args.js';
import { checkTargets, combinePgbench, combineWrk, formatReport, ratios, wrkCreatesPerSec, type BenchReport, type PhaseResults } from './bench.report.js';
import { prepareBareWriteDatabase, startBareChain, WRITE_POOL_MAX, type BareChain } from './bare.chain.js';
import { startBaselineProcess } from './baseline.process.js';
import { pipelineState, postgresVersion, waitOutboxEmpty } from './db.probe.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { runPgbench, type PgbenchRun } from './pgbench.js';
import { migrateRecordsSchema } from '@reelbase/records';
import { createShadowTables } from './shadow.schema.js';
import { measureWsLatency, type WsLatencyResult } from './ws-latency.js';
import { countPhaseCpu, stackCpuGroups, type PhaseCpu } from './proc.cpu.js';
import { ensureWrk, runWrk, type WrkRun } from './wrk.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

interface Target {
  url: string;
  token: string | null;
  projectId: string;
}

/** One contender: runs `clients` clients for `seconds` (a block or, tagged `warmup`, the warm-up). */
interface Contender {
  name: 'pgbench' | 'baseline' | 'bare' | 'gateway';
  run(clients: number, seconds: number, tag: string): Promise<WrkRun | PgbenchRun>;
}

/** One wrk run of creates. */
async function loadWithWrk(name: string, t: Target, clients: number, seconds: number, o: BenchOptions, dir: string): Promise<WrkRun> {
  const run = await runWrk({ url: `${t.url}/entities/Shot`, clients, threads: o.wrkThreads, dir, projectId: t.projectId, token: t.token, seconds, name });
  log(`${name}: ${run.requestsPerSec.toFixed(1)} req/s, ${run.non2xx} error responses`);
  return run;
}

async function main(): Promise<number> {
  let o: BenchOptions;
  try {
    o = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const startedAt = new Date();
  const loadavgAtStart = loadavg().map((l) => Math.round(l * 100) / 100);
  const failures: string[] = [];
  const notes: string[] = [];
  const phases: PhaseResults[] = [];
  let ws: WsLatencyResult | null = null;
  let wsCpu: PhaseCpu | null = null;
  let pgVersion: string | null = null;

  await ensureWrk(log);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('bench');
  let stack: Stack | undefined;
  let bareDb: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let bare: BareChain | undefined;
  try {
    pgVersion = await postgresVersion(db.url);
    let gateway: Target | null = null;
    let actor: string | null = null;
    let projectId: string;
    if (o.skipGateway) {
      await migrateRecordsSchema(db.url);
      projectId = uuidv7();
      notes.push('--skip-gateway: no stack; pgbench and the baseline only, on the records tables made by the records migrations');
    } else {
      log(`starting the stack (logs in ${join(dir, 'logs')})`);
      stack = await startBenchStack({
        databaseUrl: db.url,
        natsPrefix,
        logDir: join(dir, 'logs'),
        logLevel: o.logLevel,
        log,
      });
      const fx = await bootstrapGateway(stack.url);
      gateway = { url: stack.url, token: fx.apiKey, projectId: fx.projectId };
      actor = fx.userId;
      projectId = fx.projectId;
    }
    const shadow = await createShadowTables(db.url);
    if (shadow.notCopied.length) notes.push(`not copied to ${shadow.schema}: ${shadow.notCopied.join(', ')}`);
    const input = { entityType: 'Shot', projectId, actor, data: { code: 'PGBENCH' } };

    // The bare write chain on a database of its own, made by records' migrations (the same
    // tables, indexes and link triggers) with the same Project: in the stack's database its outbox
    // rows would be published by the records relay while the other contenders are measured.
    bareDb = await createTestDatabase(undefined, 'rb_bench_bare');
    await prepareBareWriteDatabase(bareDb.url, projectId, actor);
    bare = await startBareChain(bareDb.url, { pool: WRITE_POOL_MAX, actor });
    const baseline = await startBaselineProcess({ databaseUrl: db.url, poolSize: o.pool, schema: shadow.schema, actor });
    try {
      const current = { drainMs: [] as number[] };
      const contenders: Contender[] = [
        {
          name: 'pgbench',
          run: async (clients, seconds) => {
            const r = await runPgbench({ databaseUrl: db.url, clients, seconds, dir, schema: shadow.schema, input });
            log(`pgbench c${clients}: ${r.tps.toFixed(1)} tps`);
            return r;
          },
        },
        {
          name: 'baseline',
          run: (clients, seconds, tag) => loadWithWrk(`baseline_c${clients}_${tag}`, { url: baseline.url, token: null, projectId }, clients, seconds, o, dir),
        },
        {
          name: 'bare',
          run: (clients, seconds, tag) => loadWithWrk(`bare_c${clients}_${tag}`, { url: bare!.url, token: null, projectId }, clients, seconds, o, dir),
        },
      ];
      if (gateway) {
        const gw = gateway;
        contenders.push({
          name: 'gateway',
          run: async (clients, seconds, tag) => {
            const r = await loadWithWrk(`gateway_c${clients}_${tag}`, gw, clients, seconds, o, dir);
            // Let the event pipeline catch up so the next block does not pay for this one.
            const drained = await waitOutboxEmpty(db.url, 120_000);
            if (drained === null) notes.push(`outbox still not empty 120 s after a gateway block at ${clients} clients`);
            else if (tag !== 'warmup') current.drainMs.push(drained);
            return r;
          },
        });
      }
      for (const clients of o.clients) {
        const runs: Record<string, (WrkRun | PgbenchRun)[]> = { pgbench: [], baseline: [], bare: [], gateway: [] };
        const drainMs: number[] = [];
        current.drainMs = drainMs;
        const blocks = { pgbench: [] as number[], baseline: [] as number[], bare: [] as number[], gateway: [] as number[] };
        const failed = new Set<string>();
        const attempt = async (c: Contender, seconds: number, tag: string): Promise<void> => {
          if (failed.has(c.name)) return;
          try {
            const r = await c.run(clients, seconds, tag);
            if (tag === 'warmup') return;
            runs[c.name]!.push(r);
            blocks[c.name as keyof typeof blocks].push('tps' in r ? r.tps : wrkCreatesPerSec(r));
          } catch (err) {
            failed.add(c.name);
            failures.push(`${c.name} at ${clients} clients: ${(err as Error).message}`);
          }
        };
        log(`${clients} client(s): warm-up, then ${o.blocks} alternating block(s) of ${o.duration} s per contender`);
        if (o.warmup > 0) for (const c of contenders) await attempt(c, o.warmup, 'warmup');
        for (let b = 0; b < o.blocks; b += 1) {
          // ABCD, DCBA, …: a drift of the machine over the run weighs on every contender alike.
          const order = b % 2 === 0 ? contenders : [...contenders].reverse();
          for (const c of order) await attempt(c, o.duration, `b${b}`);
        }
        phases.push({
          clients,
          pgbench: combinePgbench(runs.pgbench as PgbenchRun[]),
          baseline: combineWrk(runs.baseline as WrkRun[]),
          bare: combineWrk(runs.bare as WrkRun[]),
          gateway: combineWrk(runs.gateway as WrkRun[]),
          blocks,
          gatewayOutboxDrainMs: drainMs.length ? Math.max(...drainMs) : null,
        });
      }
    } finally {
      await baseline.stop();
    }

    if (gateway && !o.skipWs) {
      try {
        log(`write → WebSocket latency: ${o.wsRate} creates/s for ${o.wsSeconds} s`);
        // CPU of the machine and of each process while the writes go (bench/README.md: the tail follows it).
        const cpu = stack ? countPhaseCpu(stackCpuGroups(stack)) : null;
        ws = await measureWsLatency({
          baseUrl: gateway.url,
          token: gateway.token!,
          projectId: gateway.projectId,
          entityType: 'Shot',
          rate: o.wsRate,
          seconds: o.wsSeconds,
          connections: 8,
          graceMs: 10_000,
          probeTimeoutMs: Number(process.env.BENCH_PROBE_TIMEOUT_MS ?? 120_000),
        });
        if (cpu) wsCpu = cpu.end(ws.sent);
      } catch (err) {
        const state = await pipelineState(db.url).catch((e: Error) => `state unknown: ${e.message}`);
        failures.push(`WebSocket latency: ${(err as Error).message} (${state})`);
      }
    }
    if (stack) {
      const fatal = await Promise.race([stack.fatal, new Promise<null>((r) => setTimeout(() => r(null), 0))]);
      if (fatal) failures.push(`the stack stopped itself: ${fatal.message}`);
    }
  } catch (err) {
    failures.push((err as Error).stack ?? String(err));
  } finally {
    bare?.stop();
    await stack?.stop().catch((err: Error) => failures.push(`stopping the stack: ${err.message}`));
    if (!o.skipGateway) await deleteStreams(natsPrefix).catch((err: Error) => log(`could not delete streams ${natsPrefix}*: ${err.message}`));
    await db.drop().catch((err: Error) => log(`could not drop ${db.name}: ${err.message}`));
    await bareDb?.drop().catch((err: Error) => log(`could not drop ${bareDb!.name}: ${err.message}`));
  }

  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, postgres: pgVersion, loadavgAtStart, loadavgAtEnd: loadavg().map((l) => Math.round(l * 100) / 100) },
    options: o,
    notes,
    phases: phases.map((p) => ({ ...p, ratios: ratios(p) })),
    ws,
    wsCpu,
    targets: checkTargets(phases, ws),
    failures,
  };
  process.stdout.write(`${formatReport(report, o.duration * o.blocks)}\n`);
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nresults: ${file}\n`);
  // Scripts and service logs are only worth keeping when something went wrong.
  if (failures.length) process.stdout.write(`scripts and service logs: ${dir}\n`);
  else await rm(dir, { recursive: true, force: true });
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
