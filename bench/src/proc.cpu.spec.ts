import { describe, expect, it } from 'vitest';
import { countPhaseCpu, cpuBetween, cpuSnapshot, machineTicks, type CpuSnapshot } from './proc.cpu.js';

describe('CPU by process', () => {
  it('counts a process new in the later snapshot from zero and one that exited not at all', () => {
    const before: CpuSnapshot = new Map([
      [
        'postgres',
        new Map([
          [1, 100],
          [2, 50],
        ]),
      ],
    ]);
    const after: CpuSnapshot = new Map([
      [
        'postgres',
        new Map([
          [1, 130],
          [3, 20],
        ]),
      ],
    ]);
    expect(cpuBetween(before, after)).toEqual(new Map([['postgres', 50]]));
  });

  it("reads this process's own CPU from /proc as it spins", () => {
    const groups = { pids: { me: [process.pid, undefined] }, comms: {} };
    const s0 = cpuSnapshot(groups);
    const phase = countPhaseCpu(groups);
    const t0 = performance.now();
    while (performance.now() - t0 < 200);
    const spent = cpuBetween(s0, cpuSnapshot(groups)).get('me')!;
    expect(spent).toBeGreaterThanOrEqual(100);
    expect(spent).toBeLessThan(2000);
    const c = phase.end(2);
    expect(c.perOpMs.me).toBeGreaterThanOrEqual(50);
    expect(c.busyPercent).toBeGreaterThan(0);
    expect(c.busyPercent).toBeLessThanOrEqual(100);
    const m = machineTicks();
    expect(m.busy).toBeLessThanOrEqual(m.total);
  });
});
