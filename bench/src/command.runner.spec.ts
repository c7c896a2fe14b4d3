import { describe, expect, it } from 'vitest';
import { runMeasured, splitTimes } from './command.runner.js';

describe('splitTimes', () => {
  it("takes the children's user + system time and strips the block from stderr", () => {
    const r = splitTimes('warning: x\n__bench_times__\n0m0.001s 0m0.002s\n1m2.500s 0m0.250s\n');
    expect(r.cpuSeconds).toBeCloseTo(62.75);
    expect(r.stderr).toBe('warning: x\n');
  });

  it('gives null when the block is missing or malformed', () => {
    expect(splitTimes('boom').cpuSeconds).toBeNull();
    expect(splitTimes('__bench_times__\n0m0.001s\n').cpuSeconds).toBeNull();
  });
});

describe('runMeasured', () => {
  it('returns output, exit code and a CPU figure for a real command', async () => {
    const r = await runMeasured('bash', ['-c', 'echo out; echo err >&2; exit 3'], 10_000);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('out\n');
    expect(r.stderr).toBe('err\n');
    expect(r.cpuSeconds).not.toBeNull();
  });
});
