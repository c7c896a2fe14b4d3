/**
 * The report of a run: creates/s per contender and client count, the ratios between them,
 * write → WebSocket latency, and PASS/MISS against the targets. Pure functions, so the
 * arithmetic is tested without running anything.
 */
import type { PgbenchRun } from './pgbench.js';
import type { PhaseCpu } from './proc.cpu.js';
import type { WsLatencyResult } from './ws-latency.js';
import { wrkErrors, type WrkRun } from './wrk.js';

/** The four contenders at one client count, each its blocks combined (combineWrk, combinePgbench). */
export interface PhaseResults {
  clients: number;
  pgbench: PgbenchRun | null;
  baseline: WrkRun | null;
  /** The bare write chain (bare.chain.ts): two processes and the gRPC hop, records' insert, nothing else. */
  bare?: WrkRun | null;
  gateway: WrkRun | null;
  /** Creates/s of each measured block, in the order run (empty when the phase ran as one block). */
  blocks?: { pgbench: number[]; baseline: number[]; bare: number[]; gateway: number[] };
  /** Time the records outbox took to empty after the gateway phase (the event pipeline catching up). */
  gatewayOutboxDrainMs: number | null;
}

/** Ratios of creates/s; null where a side is missing. */
export interface Ratios {
  gatewayToBaseline: number | null;
  gatewayToPgbench: number | null;
  baselineToPgbench: number | null;
  gatewayToBare: number | null;
  bareToBaseline: number | null;
}

const median = (xs: number[]): number | null => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};

/**
 * The blocks of one contender as one run: requests and time summed (so creates/s is over the
 * whole measured time), errors and CPU summed, each latency percentile the median of the blocks'.
 */
export function combineWrk(runs: WrkRun[]): WrkRun | null {
  if (!runs.length) return null;
  const sum = (f: (r: WrkRun) => number) => runs.reduce((a, r) => a + f(r), 0);
  const requests = sum((r) => r.requests);
  const durationSec = sum((r) => r.durationSec);
  const cpu = runs.every((r) => r.cpuSeconds !== null) ? sum((r) => r.cpuSeconds!) : null;
  const pct = (k: keyof WrkRun['latencyMs']) => median(runs.map((r) => r.latencyMs[k]).filter((x): x is number => x !== null));
  return {
    requestsPerSec: durationSec > 0 ? requests / durationSec : median(runs.map((r) => r.requestsPerSec))!,
    requests,
    durationSec,
    latencyAvgMs: median(runs.map((r) => r.latencyAvgMs).filter((x): x is number => x !== null)),
    latencyMs: { p50: pct('p50'), p75: pct('p75'), p90: pct('p90'), p99: pct('p99') },
    non2xx: sum((r) => r.non2xx),
    socketErrors: {
      connect: sum((r) => r.socketErrors.connect),
      read: sum((r) => r.socketErrors.read),
      write: sum((r) => r.socketErrors.write),
      timeout: sum((r) => r.socketErrors.timeout),
    },
    clients: runs[0]!.clients,
    threads: runs[0]!.threads,
    cpuSeconds: cpu,
  };
}

/** pgbench's blocks as one run: transactions over the summed time, mean latency the median of the blocks'. */
export function combinePgbench(runs: PgbenchRun[]): PgbenchRun | null {
  if (!runs.length) return null;
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const transactions = runs.reduce((a, r) => a + r.transactions, 0);
  return {
    tps: runs.reduce((a, r) => a + r.tps * r.seconds, 0) / seconds,
    transactions,
    failed: runs.reduce((a, r) => a + r.failed, 0),
    latencyAvgMs: median(runs.map((r) => r.latencyAvgMs).filter((x): x is number => x !== null)),
    clients: runs[0]!.clients,
    seconds,
    cpuSeconds: runs.every((r) => r.cpuSeconds !== null) ? runs.reduce((a, r) => a + r.cpuSeconds!, 0) : null,
  };
}

export interface TargetCheck {
  name: string;
  status: 'PASS' | 'MISS' | 'n/a';
  detail: string;
}

/** Everything a run found; written as JSON to bench/results/. */
export interface BenchReport {
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; node: string; postgres: string | null; loadavgAtStart?: number[]; loadavgAtEnd?: number[] };
  options: unknown;
  notes: string[];
  phases: (PhaseResults & { ratios: Ratios })[];
  ws: WsLatencyResult | null;
  /** The machine's CPU during the WebSocket phase, and CPU ms per create by process. */
  wsCpu?: PhaseCpu | null;
  targets: TargetCheck[];
  failures: string[];
}

/** The targets the run checks (bench/README.md). */
export const TARGETS = { gatewayToBaselineAt32: 0.8, gatewayToBare: 0.9, p50At1ToBaseline: 2, wsP99Ms: 20, wsRate: 300 } as const;

/** Successful creates per second of a wrk run (error responses do not count as creates). */
export function wrkCreatesPerSec(run: WrkRun): number {
  if (run.requests === 0) return 0;
  return (run.requestsPerSec * Math.max(0, run.requests - run.non2xx)) / run.requests;
}

/** Creates/s of each contender (null when it did not run). */
export function createsPerSec(p: PhaseResults): { pgbench: number | null; baseline: number | null; bare: number | null; gateway: number | null } {
  return {
    pgbench: p.pgbench ? p.pgbench.tps : null,
    baseline: p.baseline ? wrkCreatesPerSec(p.baseline) : null,
    bare: p.bare ? wrkCreatesPerSec(p.bare) : null,
    gateway: p.gateway ? wrkCreatesPerSec(p.gateway) : null,
  };
}

const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : a / b);

/** gateway/baseline, gateway/pgbench and baseline/pgbench. */
export function ratios(p: PhaseResults): Ratios {
  const c = createsPerSec(p);
  return {
    gatewayToBaseline: ratio(c.gateway, c.baseline),
    gatewayToPgbench: ratio(c.gateway, c.pgbench),
    baselineToPgbench: ratio(c.baseline, c.pgbench),
    gatewayToBare: ratio(c.gateway, c.bare),
    bareToBaseline: ratio(c.bare, c.baseline),
  };
}

/** The smallest and largest of `a[i] / b[i]` over the blocks (null without two paired blocks). */
export function blockRatioRange(a: number[], b: number[]): [number, number] | null {
  const rs = a.map((x, i) => (b[i] ? x / b[i]! : NaN)).filter((x) => Number.isFinite(x));
  return rs.length < 2 ? null : [Math.min(...rs), Math.max(...rs)];
}

/** PASS/MISS against the issue's targets. A run with errors or lost events never passes. */
export function checkTargets(phases: PhaseResults[], ws: WsLatencyResult | null): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const at32 = phases.find((p) => p.clients === 32);
  const throughputName = `gateway ≥ ${TARGETS.gatewayToBaselineAt32}× baseline at 32 clients`;
  const r = at32 ? ratios(at32).gatewayToBaseline : null;
  if (!at32 || r === null) {
    checks.push({ name: throughputName, status: 'n/a', detail: 'no gateway and baseline figures at 32 clients' });
  } else {
    const errors = (at32.gateway ? wrkErrors(at32.gateway) : 0) + (at32.baseline ? wrkErrors(at32.baseline) : 0);
    const pass = r >= TARGETS.gatewayToBaselineAt32 && errors === 0;
    checks.push({ name: throughputName, status: pass ? 'PASS' : 'MISS', detail: `${r.toFixed(2)}×${errors ? `, ${errors} failed requests` : ''}` });
  }
  for (const p of phases) {
    const name = `gateway ≥ ${TARGETS.gatewayToBare}× bare chain at ${p.clients} client${p.clients === 1 ? '' : 's'}`;
    const rb = ratios(p).gatewayToBare;
    if (rb === null) {
      checks.push({ name, status: 'n/a', detail: 'no gateway and bare chain figures' });
      continue;
    }
    const errors = (p.gateway ? wrkErrors(p.gateway) : 0) + (p.bare ? wrkErrors(p.bare) : 0);
    const pass = rb >= TARGETS.gatewayToBare && errors === 0;
    checks.push({ name, status: pass ? 'PASS' : 'MISS', detail: `${rb.toFixed(2)}×${errors ? `, ${errors} failed requests` : ''}` });
  }
  const at1 = phases.find((p) => p.clients === 1);
  const p50Name = `gateway p50 ≤ ${TARGETS.p50At1ToBaseline}× baseline's at 1 client`;
  const g50 = at1?.gateway?.latencyMs.p50 ?? null;
  const b50 = at1?.baseline?.latencyMs.p50 ?? null;
  if (g50 === null || b50 === null || b50 === 0) {
    checks.push({ name: p50Name, status: 'n/a', detail: 'no gateway and baseline latencies at 1 client' });
  } else {
    const x = g50 / b50;
    checks.push({
      name: p50Name,
      status: x <= TARGETS.p50At1ToBaseline ? 'PASS' : 'MISS',
      detail: `${g50.toFixed(2)} vs ${b50.toFixed(2)} ms (${x.toFixed(2)}×)`,
    });
  }
  const wsName = `write → WS p99 ≤ ${TARGETS.wsP99Ms} ms at ${TARGETS.wsRate} writes/s`;
  if (!ws) {
    checks.push({ name: wsName, status: 'n/a', detail: 'latency phase not run' });
  } else {
    const p99 = ws.sendToEventMs.p99;
    const problems = [
      ws.rate < TARGETS.wsRate ? `rate was only ${ws.rate}/s` : '',
      ws.failed ? `${ws.failed} failed creates` : '',
      ws.eventsMissing ? `${ws.eventsMissing} events missing` : '',
      ws.socketClosed ? ws.socketClosed : '',
    ].filter(Boolean);
    const pass = !problems.length && p99 <= TARGETS.wsP99Ms;
    checks.push({ name: wsName, status: pass ? 'PASS' : 'MISS', detail: [`p99 ${fmt(p99, 1)} ms`, ...problems].join(', ') });
  }
  return checks;
}

function fmt(n: number | null | undefined, digits = 0): string {
  return n === null || n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits);
}

function pad(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
}

function wrkLine(name: string, run: WrkRun | null, seconds: number): string[] {
  if (!run) return [name, '–', '–', '–', '–', '–'];
  const cpu = run.cpuSeconds === null ? '–' : `${fmt((run.cpuSeconds / seconds) * 100)}%`;
  return [name, fmt(wrkCreatesPerSec(run), 1), String(wrkErrors(run)), fmt(run.latencyMs.p50, 2), fmt(run.latencyMs.p99, 2), cpu];
}

/** The human-readable table. */
export function formatReport(report: BenchReport, seconds: number): string {
  const out: string[] = [];
  const widths = [22, 11, 7, 9, 9, 9];
  for (const p of report.phases) {
    out.push(`\n${p.clients} client${p.clients === 1 ? '' : 's'}`);
    out.push(pad(['', 'creates/s', 'errors', 'p50 ms', 'p99 ms', 'loadgen'], widths));
    const pg = p.pgbench;
    out.push(
      pad(
        pg
          ? [
              'pgbench (SQL only)',
              fmt(pg.tps, 1),
              String(pg.failed),
              fmt(pg.latencyAvgMs, 2) + '*',
              '–',
              pg.cpuSeconds === null ? '–' : `${fmt((pg.cpuSeconds / seconds) * 100)}%`,
            ]
          : ['pgbench (SQL only)', '–', '–', '–', '–', '–'],
        widths,
      ),
    );
    out.push(pad(wrkLine('baseline (Express+pg)', p.baseline, seconds), widths));
    if (p.bare !== undefined) out.push(pad(wrkLine('bare chain (2 procs)', p.bare, seconds), widths));
    out.push(pad(wrkLine('gateway (whole stack)', p.gateway, seconds), widths));
    const r = p.ratios;
    const range = (a: number[] | undefined, b: number[] | undefined) => {
      const rr = a && b ? blockRatioRange(a, b) : null;
      return rr ? ` (blocks ${fmt(rr[0], 2)}–${fmt(rr[1], 2)})` : '';
    };
    out.push(
      `  gateway/baseline ${fmt(r.gatewayToBaseline, 2)}×${range(p.blocks?.gateway, p.blocks?.baseline)}   gateway/pgbench ${fmt(r.gatewayToPgbench, 2)}×   baseline/pgbench ${fmt(r.baselineToPgbench, 2)}×`,
    );
    if (p.bare !== undefined) {
      out.push(
        `  gateway/bare ${fmt(r.gatewayToBare, 2)}×${range(p.blocks?.gateway, p.blocks?.bare)}   bare/baseline ${fmt(r.bareToBaseline, 2)}×${range(p.blocks?.bare, p.blocks?.baseline)}`,
      );
    }
    if (p.gatewayOutboxDrainMs !== null) out.push(`  outbox drained ${fmt(p.gatewayOutboxDrainMs)} ms after the gateway phase`);
  }
  if (report.phases.some((p) => p.pgbench)) out.push('  * pgbench prints the mean latency only');
  const ws = report.ws;
  if (ws) {
    out.push(`\nwrite → WebSocket at ${ws.rate} creates/s for ${ws.seconds} s: ${ws.sent} sent, ${ws.failed} failed, ${ws.eventsMissing} events missing`);
    const line = (name: string, s: WsLatencyResult['httpMs']) =>
      `  ${name.padEnd(26)} p50 ${fmt(s.p50, 1)}  p90 ${fmt(s.p90, 1)}  p99 ${fmt(s.p99, 1)}  max ${fmt(s.max, 1)} ms`;
    out.push(line('sent → event', ws.sendToEventMs));
    out.push(line('answered → event', ws.answerToEventMs));
    out.push(line('sent → answered (HTTP)', ws.httpMs));
    out.push(
      `  generator: largest send delay ${fmt(ws.maxSendLagMs, 1)} ms; wait for the probe event before start ${fmt(ws.probeWaitMs)} ms (${ws.probesSent} probe${ws.probesSent === 1 ? '' : 's'})`,
    );
    if (ws.failures.length) out.push(`  failures: ${ws.failures.join(' | ')}`);
    const c = report.wsCpu;
    if (c) {
      const per = Object.entries(c.perOpMs).sort((a, b) => b[1] - a[1]);
      const total = per.reduce((a, [, v]) => a + v, 0);
      out.push(`  CPUs ${fmt(c.busyPercent, 1)}% busy; CPU ms per create ${fmt(total, 2)}: ${per.map(([k, v]) => `${k} ${fmt(v, 2)}`).join(', ')}`);
    }
  }
  const m = report.machine;
  if (m.loadavgAtStart) out.push(`\nload average at start ${m.loadavgAtStart.join(' ')}, at end ${m.loadavgAtEnd?.join(' ') ?? '–'} (${m.cpus} CPUs)`);
  out.push('\ntargets');
  for (const t of report.targets) out.push(`  ${t.status.padEnd(4)}  ${t.name}: ${t.detail}`);
  for (const n of report.notes) out.push(`note: ${n}`);
  for (const f of report.failures) out.push(`FAILED: ${f}`);
  return out.join('\n');
}
