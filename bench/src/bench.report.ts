/**
 * The report of a run: creates/s per contender and client count, the ratios between them,
 * write → WebSocket latency, and PASS/MISS against the targets. Pure functions, so the
 * arithmetic is tested without running anything.
 */
import type { PgbenchRun } from './pgbench.js';
import type { WsLatencyResult } from './ws-latency.js';
import { wrkErrors, type WrkRun } from './wrk.js';

/** The three contenders at one client count. */
export interface PhaseResults {
  clients: number;
  pgbench: PgbenchRun | null;
  baseline: WrkRun | null;
  gateway: WrkRun | null;
  /** Time the records outbox took to empty after the gateway phase (the event pipeline catching up). */
  gatewayOutboxDrainMs: number | null;
}

/** Ratios of creates/s; null where a side is missing. */
export interface Ratios {
  gatewayToBaseline: number | null;
  gatewayToPgbench: number | null;
  baselineToPgbench: number | null;
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
  machine: { cpus: number; node: string; postgres: string | null };
  options: unknown;
  notes: string[];
  phases: (PhaseResults & { ratios: Ratios })[];
  ws: WsLatencyResult | null;
  targets: TargetCheck[];
  failures: string[];
}

/** Targets from the issue. */
export const TARGETS = { gatewayToBaselineAt32: 0.8, wsP99Ms: 50, wsRate: 300 } as const;

/** Successful creates per second of a wrk run (error responses do not count as creates). */
export function wrkCreatesPerSec(run: WrkRun): number {
  if (run.requests === 0) return 0;
  return (run.requestsPerSec * Math.max(0, run.requests - run.non2xx)) / run.requests;
}

/** Creates/s of each contender (null when it did not run). */
export function createsPerSec(p: PhaseResults): { pgbench: number | null; baseline: number | null; gateway: number | null } {
  return {
    pgbench: p.pgbench ? p.pgbench.tps : null,
    baseline: p.baseline ? wrkCreatesPerSec(p.baseline) : null,
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
  };
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
    out.push(pad(wrkLine('gateway (whole stack)', p.gateway, seconds), widths));
    const r = p.ratios;
    out.push(
      `  gateway/baseline ${fmt(r.gatewayToBaseline, 2)}×   gateway/pgbench ${fmt(r.gatewayToPgbench, 2)}×   baseline/pgbench ${fmt(r.baselineToPgbench, 2)}×`,
    );
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
  }
  out.push('\ntargets');
  for (const t of report.targets) out.push(`  ${t.status.padEnd(4)}  ${t.name}: ${t.detail}`);
  for (const n of report.notes) out.push(`note: ${n}`);
  for (const f of report.failures) out.push(`FAILED: ${f}`);
  return out.join('\n');
}
