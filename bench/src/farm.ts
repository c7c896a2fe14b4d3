/**
 * `npm run bench:farm -- [--agents 1,8,32] [--seconds 4] [--rounds 3] [--check]`: farm claims
 * (bench/README.md, "Farm claims"), in one run against one database:
 *   - the gateway: `POST /farm/claim` with an API key → gateway → gRPC → records' claim statement;
 *   - the baseline: one Express + pg process (farm.baseline.main.ts) running the same claim
 *     statement (records' FarmRepository.claim) on the same tables, nothing else;
 * for each agent count, in alternating blocks (`--rounds` blocks of `--seconds` each, the gateway
 * first in even rounds), each agent a loop of claims on its own keep-alive connection. Jobs of
 * 10,000 one-frame chunks are submitted through the gateway, separate pools for the two, topped
 * up between blocks. Printed: claims/s, p50/p99 claim latency, duplicates (a chunk handed out
 * twice: leases last an hour, nothing is completed, so each chunk may be handed out only once),
 * errors. Targets at 8 agents: ≥ 0.5× the baseline's claims/s, gateway p99 ≤ 50 ms, 0 duplicates.
 * `--check` exits 1 when a target is missed. Writes JSON to bench/results/.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, deleteStreams, uniquePrefix, type Stack } from '@reelbase/lib-testkit';
import { startBaselineProcess, type BaselineProcess } from './baseline.process.js';
import { startBenchStack } from './bench.stack.js';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { LeanClient } from './http.client.js';
import { summarize } from './stats.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const CHUNKS_PER_JOB = 10_000;
const log = (line: string) => process.stdout.write(`[bench:farm] ${line}\n`);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

interface Tally {
  claims: number;
  ms: number;
  latencies: number[];
  errors: number;
  empty: number;
  seen: Set<string>;
  duplicates: number;
}

const tally = (): Tally => ({ claims: 0, ms: 0, latencies: [], errors: 0, empty: 0, seen: new Set(), duplicates: 0 });

/** `agents` loops of claims for `seconds` against one contender. */
async function block(url: string, path: string, headers: Record<string, string>, pool: string, agents: number, seconds: number, into: Tally): Promise<void> {
  const clients = Array.from({ length: agents }, () => new LeanClient(url));
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (client, n) => {
      const body = JSON.stringify({ pool, worker: `agent-${n}`, lease_seconds: 3600 });
      while (performance.now() < end) {
        const s = performance.now();
        try {
          const res = await client.request('POST', path, headers, body);
          const ms = performance.now() - s;
          if (res.status === 200) {
            const id = (JSON.parse(res.text) as { chunk: { id: string } }).chunk.id;
            if (into.seen.has(id)) into.duplicates += 1;
            into.seen.add(id);
            into.claims += 1;
            into.latencies.push(ms);
          } else if (res.status === 204) into.empty += 1;
          else into.errors += 1;
        } catch {
          into.errors += 1;
        }
      }
    }),
  );
  into.ms += performance.now() - t0;
  for (const c of clients) c.close();
}

async function main(): Promise<number> {
  const agentCounts = arg('agents', '1,8,32').split(',').map(Number);
  const seconds = Number(arg('seconds', '4'));
  const rounds = Number(arg('rounds', '3'));
  const check = process.argv.includes('--check');
  const dir = await mkdtemp(join(tmpdir(), 'bench-farm-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = uniquePrefix('benchf');
  let stack: Stack | undefined;
  let baseline: BaselineProcess | undefined;
  const sql = new pg.Client({ connectionString: db.url });
  const loadStart = loadavg().map((l) => Math.round(l * 100) / 100);
  try {
    log(`starting the stack on database ${db.name} (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({ databaseUrl: db.url, natsPrefix, logDir: join(dir, 'logs'), log });
    const fx = await bootstrapGateway(stack.url);
    await sql.connect();
    baseline = await startBaselineProcess({
      main: 'farm.baseline.main.js',
      databaseUrl: db.url,
      poolSize: 10,
      schema: 'records',
      actor: null,
      env: { NATS_PREFIX: natsPrefix },
    });
    const auth = { authorization: `Bearer ${fx.apiKey}`, 'content-type': 'application/json' };

    /** Keeps at least `min` queued chunks in `pool` (jobs submitted through the gateway). */
    const topUp = async (pool: string, min: number) => {
      for (;;) {
        const res = await sql.query<{ n: number }>(`select count(*)::int as n from records.farm_chunk where pool = $1 and state = 'queued' and offerable`, [
          pool,
        ]);
        if (res.rows[0]!.n >= min) return;
        const r = await fetch(`${stack!.url}/farm/jobs`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ project_id: fx.projectId, name: `bench ${pool}`, kind: 'render', pool, frames: `1-${CHUNKS_PER_JOB}`, chunk_size: 1 }),
        });
        if (r.status !== 200) throw new Error(`POST /farm/jobs answered ${r.status}: ${await r.text()}`);
      }
    };

    const rows = [];
    for (const agents of agentCounts) {
      const gw = tally();
      const base = tally();
      for (let round = -1; round < rounds; round++) {
        await topUp('gateway', 8000);
        await topUp('baseline', 8000);
        // Round -1 warms both up and is not counted.
        const into = (t: Tally) => (round < 0 ? tally() : t);
        const runGw = () => block(stack!.url, '/farm/claim', auth, 'gateway', agents, round < 0 ? 1 : seconds, into(gw));
        const runBase = () => block(baseline!.url, '/claim', { 'content-type': 'application/json' }, 'baseline', agents, round < 0 ? 1 : seconds, into(base));
        if (round % 2 === 0) {
          await runGw();
          await runBase();
        } else {
          await runBase();
          await runGw();
        }
      }
      const g = summarize(gw.latencies);
      const b = summarize(base.latencies);
      const row = {
        agents,
        gateway: {
          claimsPerSecond: (gw.claims * 1000) / gw.ms,
          p50: g.p50,
          p99: g.p99,
          duplicates: gw.duplicates,
          errors: gw.errors,
          empty: gw.empty,
          claims: gw.claims,
        },
        baseline: {
          claimsPerSecond: (base.claims * 1000) / base.ms,
          p50: b.p50,
          p99: b.p99,
          duplicates: base.duplicates,
          errors: base.errors,
          empty: base.empty,
          claims: base.claims,
        },
      };
      rows.push({ ...row, ratio: row.gateway.claimsPerSecond / row.baseline.claimsPerSecond });
      log(`${agents} agents done: gateway ${row.gateway.claimsPerSecond.toFixed(0)}/s, baseline ${row.baseline.claimsPerSecond.toFixed(0)}/s`);
    }
    // Every chunk handed out at most once across the whole run, checked in the database too.
    const twice = await sql.query<{ n: number }>(`select count(*)::int as n from records.farm_chunk where claims > 1`);

    const f = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
    const lines = [
      '',
      `farm claims, ${seconds} s blocks × ${rounds} rounds, alternating; ${cpus().length} cores, load ${loadStart.join(' ')}`,
      'agents | gateway claims/s | baseline claims/s | ratio | gateway p50 / p99 ms | baseline p50 / p99 ms | duplicates | errors',
      ...rows.map(
        (r) =>
          `${String(r.agents).padStart(6)} | ${r.gateway.claimsPerSecond.toFixed(0).padStart(16)} | ${r.baseline.claimsPerSecond.toFixed(0).padStart(17)} | ${r.ratio.toFixed(2).padStart(5)} | ${`${f(r.gateway.p50)} / ${f(r.gateway.p99)}`.padStart(20)} | ${`${f(r.baseline.p50)} / ${f(r.baseline.p99)}`.padStart(21)} | ${String(r.gateway.duplicates + r.baseline.duplicates).padStart(10)} | ${r.gateway.errors + r.baseline.errors}`,
      ),
      `chunks handed out more than once (database): ${twice.rows[0]!.n}`,
    ];
    const at8 = rows.find((r) => r.agents === 8);
    const verdicts: string[] = [];
    if (at8) {
      verdicts.push(`${at8.ratio >= 0.5 ? 'PASS' : 'MISS'} gateway ≥ 0.5× the baseline at 8 agents (${at8.ratio.toFixed(2)}×)`);
      verdicts.push(`${at8.gateway.p99 <= 50 ? 'PASS' : 'MISS'} gateway p99 ≤ 50 ms at 8 agents (${f(at8.gateway.p99)} ms)`);
    }
    const dupes = rows.reduce((n, r) => n + r.gateway.duplicates + r.baseline.duplicates, 0) + twice.rows[0]!.n;
    const errors = rows.reduce((n, r) => n + r.gateway.errors + r.baseline.errors, 0);
    verdicts.push(`${dupes === 0 ? 'PASS' : 'MISS'} 0 duplicates (${dupes})`);
    verdicts.push(`${errors === 0 ? 'PASS' : 'MISS'} 0 errors (${errors})`);
    process.stdout.write(`${[...lines, ...verdicts].join('\n')}\n`);
    await mkdir(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `farm-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(
      file,
      JSON.stringify({ seconds, rounds, cores: cpus().length, loadStart, rows, duplicatesInDatabase: twice.rows[0]!.n, verdicts }, null, 2),
    );
    process.stdout.write(`\nresults: ${file}\n`);
    return check && verdicts.some((v) => v.startsWith('MISS')) ? 1 : 0;
  } finally {
    await sql.end().catch(() => {});
    await baseline?.stop();
    await stack?.stop();
    await deleteStreams(natsPrefix).catch(() => {});
    await db.drop().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:farm failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
