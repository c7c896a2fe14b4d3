/**
 * `npm run bench`: record creates through the gateway against pgbench and a minimal
 * Express + pg baseline, in one run against one database, then write → WebSocket latency
 * at a fixed rate. Prints a table and PASS/MISS against the targets and writes the same as
 * JSON to bench/results/. Exits non-zero only when something failed to run.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { v7 as uuidv7 } from 'uuid';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { parseBenchArgs, USAGE, type BenchOptions } from './bench.args.js';
import { checkTargets, formatReport, ratios, type BenchReport, type PhaseResults } from './bench.report.js';
import { startBaselineProcess } from './baseline.process.js';
import { pipelineState, postgresVersion, waitOutboxEmpty } from './db.probe.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { runPgbench } from './pgbench.js';
import { migrateRecordsSchema } from '@reelbase/records';
import { createShadowTables } from './shadow.schema.js';
import { measureWsLatency, type WsLatencyResult } from './ws-latency.js';
import { ensureWrk, runWrk, type WrkRun } from './wrk.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

interface Target {
  url: string;
  token: string | null;
  projectId: string;
}

/** Unmeasured warm-up, then the measured wrk run. */
async function loadWithWrk(name: string, t: Target, clients: number, o: BenchOptions, dir: string): Promise<WrkRun> {
  const common = { url: `${t.url}/entities/Shot`, clients, threads: o.wrkThreads, dir, projectId: t.projectId, token: t.token };
  if (o.warmup > 0) await runWrk({ ...common, seconds: o.warmup, name: `${name}_warmup` });
  const run = await runWrk({ ...common, seconds: o.duration, name });
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
  const failures: string[] = [];
  const notes: string[] = [];
  const phases: PhaseResults[] = [];
  let ws: WsLatencyResult | null = null;
  let pgVersion: string | null = null;

  await ensureWrk(log);
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('bench');
  let stack: Stack | undefined;
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

    for (const clients of o.clients) {
      const phase: PhaseResults = { clients, pgbench: null, baseline: null, gateway: null, gatewayOutboxDrainMs: null };
      phases.push(phase);
      try {
        log(`pgbench, ${clients} client(s)`);
        if (o.warmup > 0) await runPgbench({ databaseUrl: db.url, clients, seconds: o.warmup, dir, schema: shadow.schema, input });
        phase.pgbench = await runPgbench({ databaseUrl: db.url, clients, seconds: o.duration, dir, schema: shadow.schema, input });
        log(`pgbench: ${phase.pgbench.tps.toFixed(1)} tps`);
      } catch (err) {
        failures.push(`pgbench at ${clients} clients: ${(err as Error).message}`);
      }
      try {
        log(`baseline, ${clients} client(s)`);
        const baseline = await startBaselineProcess({ databaseUrl: db.url, poolSize: o.pool, schema: shadow.schema, actor });
        try {
          phase.baseline = await loadWithWrk(`baseline_c${clients}`, { url: baseline.url, token: null, projectId }, clients, o, dir);
        } finally {
          await baseline.stop();
        }
      } catch (err) {
        failures.push(`baseline at ${clients} clients: ${(err as Error).message}`);
      }
      if (gateway) {
        try {
          log(`gateway, ${clients} client(s)`);
          phase.gateway = await loadWithWrk(`gateway_c${clients}`, gateway, clients, o, dir);
          // Let the event pipeline catch up so the next phase does not pay for this one.
          phase.gatewayOutboxDrainMs = await waitOutboxEmpty(db.url, 120_000);
          if (phase.gatewayOutboxDrainMs === null) notes.push(`outbox still not empty 120 s after the gateway phase at ${clients} clients`);
        } catch (err) {
          failures.push(`gateway at ${clients} clients: ${(err as Error).message}`);
        }
      }
    }

    if (gateway && !o.skipWs) {
      try {
        log(`write → WebSocket latency: ${o.wsRate} creates/s for ${o.wsSeconds} s`);
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
    await stack?.stop().catch((err: Error) => failures.push(`stopping the stack: ${err.message}`));
    if (!o.skipGateway) await deleteStreams(natsPrefix).catch((err: Error) => log(`could not delete streams ${natsPrefix}*: ${err.message}`));
    await db.drop().catch((err: Error) => log(`could not drop ${db.name}: ${err.message}`));
  }

  const report: BenchReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, postgres: pgVersion },
    options: o,
    notes,
    phases: phases.map((p) => ({ ...p, ratios: ratios(p) })),
    ws,
    targets: checkTargets(phases, ws),
    failures,
  };
  process.stdout.write(`${formatReport(report, o.duration)}\n`);
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
