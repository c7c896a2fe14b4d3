import { describe, expect, it } from 'vitest';
import {
  blockRatioRange,
  checkTargets,
  combinePgbench,
  combineWrk,
  formatReport,
  ratios,
  wrkCreatesPerSec,
  type PhaseResults,
  type TargetCheck,
} from './bench.report.js';
import type { PgbenchRun } from './pgbench.js';
import { summarize } from './stats.js';
import type { WsLatencyResult } from './ws-latency.js';
import type { WrkRun } from './wrk.js';

function wrk(rps: number, over: Partial<WrkRun> = {}): WrkRun {
  return {
    requestsPerSec: rps,
    requests: rps * 10,
    durationSec: 10,
    latencyAvgMs: 1,
    latencyMs: { p50: 1, p75: 2, p90: 3, p99: 4 },
    non2xx: 0,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    clients: 32,
    threads: 1,
    cpuSeconds: 0.5,
    ...over,
  };
}

const pgbench = (tps: number): PgbenchRun => ({ tps, transactions: tps * 10, failed: 0, latencyAvgMs: 1, clients: 32, seconds: 10, cpuSeconds: 1 });

const phase = (over: Partial<PhaseResults> = {}): PhaseResults => ({
  clients: 32,
  pgbench: pgbench(4485),
  baseline: wrk(1514),
  bare: wrk(1400),
  gateway: wrk(1300),
  gatewayOutboxDrainMs: 40,
  ...over,
});

function wsResult(over: Partial<WsLatencyResult> = {}): WsLatencyResult {
  return {
    rate: 300,
    seconds: 20,
    sent: 6000,
    answered: 6000,
    failed: 0,
    failures: [],
    eventsMatched: 6000,
    eventsMissing: 0,
    sendToEventMs: summarize([10, 20, 30, 40]),
    answerToEventMs: summarize([1, 2, 3]),
    httpMs: summarize([5, 6]),
    maxSendLagMs: 2,
    probeWaitMs: 30,
    probesSent: 1,
    socketClosed: null,
    ...over,
  };
}

describe('wrkCreatesPerSec', () => {
  it('does not count error responses as creates', () => {
    expect(wrkCreatesPerSec(wrk(1000))).toBe(1000);
    expect(wrkCreatesPerSec(wrk(1000, { requests: 10_000, non2xx: 2_500 }))).toBe(750);
    expect(wrkCreatesPerSec(wrk(0, { requests: 0 }))).toBe(0);
  });
});

describe('ratios', () => {
  it('divides creates/s of the three contenders', () => {
    const r = ratios(phase());
    expect(r.gatewayToBaseline).toBeCloseTo(1300 / 1514);
    expect(r.gatewayToPgbench).toBeCloseTo(1300 / 4485);
    expect(r.baselineToPgbench).toBeCloseTo(0.3376, 3);
    expect(r.gatewayToBare).toBeCloseTo(1300 / 1400);
    expect(r.bareToBaseline).toBeCloseTo(1400 / 1514);
  });

  it('is null where a contender did not run', () => {
    expect(ratios(phase({ gateway: null }))).toEqual({
      gatewayToBaseline: null,
      gatewayToPgbench: null,
      baselineToPgbench: expect.any(Number),
      gatewayToBare: null,
      bareToBaseline: expect.any(Number),
    });
  });
});

describe('combining blocks', () => {
  it('counts creates/s over the summed time, sums errors and takes the median of each percentile', () => {
    const a = wrk(1000, { requests: 5000, durationSec: 5, latencyMs: { p50: 1, p75: 2, p90: 3, p99: 10 }, non2xx: 1 });
    const b = wrk(2000, { requests: 10_000, durationSec: 5, latencyMs: { p50: 3, p75: 4, p90: 5, p99: 30 }, non2xx: 2 });
    const c = combineWrk([a, b])!;
    expect(c.requestsPerSec).toBe(1500);
    expect(c.requests).toBe(15_000);
    expect(c.non2xx).toBe(3);
    expect(c.latencyMs.p50).toBe(2);
    expect(c.latencyMs.p99).toBe(20);
    expect(combineWrk([])).toBeNull();
  });

  it('weights pgbench blocks by their seconds', () => {
    const c = combinePgbench([
      { ...pgbench(100), seconds: 5 },
      { ...pgbench(300), seconds: 15 },
    ])!;
    expect(c.tps).toBe(250);
    expect(c.seconds).toBe(20);
  });

  it('gives the range of per-block ratios, or null with fewer than two blocks', () => {
    expect(blockRatioRange([90, 100], [100, 100])).toEqual([0.9, 1]);
    expect(blockRatioRange([90], [100])).toBeNull();
  });
});

describe('checkTargets', () => {
  const named = (t: TargetCheck[], prefix: string) => t.find((c) => c.name.startsWith(prefix))!;

  it('passes at ≥ 0.8× the baseline at 32 clients, ≥ 0.9× the bare chain, a p50 within 2× and a WS p99 within 20 ms', () => {
    const t = checkTargets(
      [phase({ clients: 1, gateway: wrk(1, { latencyMs: { p50: 2, p75: 2, p90: 3, p99: 4 } }), bare: wrk(1) }), phase()],
      wsResult({ sendToEventMs: summarize([5, 10, 15]) }),
    );
    expect(t.map((c) => c.name)).toEqual([
      'gateway ≥ 0.8× baseline at 32 clients',
      'gateway ≥ 0.9× bare chain at 1 client',
      'gateway ≥ 0.9× bare chain at 32 clients',
      "gateway p50 ≤ 2× baseline's at 1 client",
      'write → WS p99 ≤ 20 ms at 300 writes/s',
    ]);
    expect(t.map((c) => c.status)).toEqual(['PASS', 'PASS', 'PASS', 'PASS', 'PASS']);
    expect(t[0]!.detail).toBe('0.86×');
  });

  it('misses below 0.8×, and never passes a run with failed requests', () => {
    expect(checkTargets([phase({ gateway: wrk(1000) })], null)[0]!.status).toBe('MISS');
    const withErrors = checkTargets([phase({ gateway: wrk(1500, { socketErrors: { connect: 0, read: 0, write: 0, timeout: 3 } }) })], null)[0]!;
    expect(withErrors.status).toBe('MISS');
    expect(withErrors.detail).toContain('3 failed requests');
  });

  it('misses below 0.9× the bare chain and above twice the baseline p50', () => {
    const t = checkTargets([phase({ clients: 1, bare: wrk(1500), gateway: wrk(1300, { latencyMs: { p50: 2.5, p75: 3, p90: 3, p99: 4 } }) })], null);
    expect(named(t, 'gateway ≥ 0.9× bare chain at 1').status).toBe('MISS');
    expect(named(t, 'gateway p50').status).toBe('MISS');
    expect(named(t, 'gateway p50').detail).toContain('2.50×');
  });

  it('misses the WS target on a slow p99, lost events, failed creates or a lower rate', () => {
    const check = (ws: WsLatencyResult) => named(checkTargets([], ws), 'write → WS');
    expect(check(wsResult({ sendToEventMs: summarize([10, 21]) })).status).toBe('MISS');
    expect(check(wsResult({ eventsMissing: 1 })).detail).toContain('1 events missing');
    expect(check(wsResult({ failed: 2 })).status).toBe('MISS');
    expect(check(wsResult({ rate: 100 })).detail).toContain('rate was only 100/s');
    expect(check(wsResult({ socketClosed: 'event socket closed: 1008 ' })).status).toBe('MISS');
  });

  it('is n/a without 32-client figures, a bare chain, 1-client figures or a latency phase', () => {
    expect(checkTargets([phase({ clients: 16, bare: null })], null).map((c) => c.status)).toEqual(['n/a', 'n/a', 'n/a', 'n/a']);
  });
});

describe('formatReport', () => {
  it('prints each contender, the ratios, the latency and the verdicts', () => {
    const phases = [phase()];
    const text = formatReport(
      {
        startedAt: '',
        finishedAt: '',
        machine: { cpus: 2, node: 'v24', postgres: '15' },
        options: {},
        notes: ['a note'],
        phases: phases.map((p) => ({ ...p, ratios: ratios(p) })),
        ws: wsResult(),
        targets: checkTargets(phases, wsResult()),
        failures: ['gateway at 1 clients: boom'],
      },
      10,
    );
    expect(text).toContain('gateway/baseline 0.86×');
    expect(text).toContain('gateway/bare 0.93×');
    expect(text).toMatch(/bare chain \(2 procs\)\s+1400\.0\s+0/);
    expect(text).toMatch(/baseline \(Express\+pg\)\s+1514\.0\s+0/);
    expect(text).toContain('sent → event');
    expect(text).toContain('PASS  gateway ≥ 0.8× baseline at 32 clients');
    expect(text).toContain('note: a note');
    expect(text).toContain('FAILED: gateway at 1 clients: boom');
  });
});
