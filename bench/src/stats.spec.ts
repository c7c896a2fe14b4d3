import { describe, expect, it } from 'vitest';
import { alternate, pcts, percentile, summarize } from './stats.js';

describe('percentile (nearest rank)', () => {
  const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('picks the smallest value with at least p% of the sample at or below it', () => {
    expect(percentile(oneToHundred, 50)).toBe(50);
    expect(percentile(oneToHundred, 99)).toBe(99);
    expect(percentile(oneToHundred, 99.5)).toBe(100);
    expect(percentile(oneToHundred, 100)).toBe(100);
    expect(percentile(oneToHundred, 0)).toBe(1);
  });

  it('never interpolates between measured values', () => {
    expect(percentile([10, 20], 50)).toBe(10);
    expect(percentile([10, 20], 51)).toBe(20);
    expect(percentile([7], 99)).toBe(7);
  });

  it('is NaN for an empty sample and rejects a p outside 0..100', () => {
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('sorts an unsorted sample before ranking and does not mutate it', () => {
    const sample = [5, 1, 4, 2, 3];
    const s = summarize(sample);
    expect(s).toEqual({ count: 5, mean: 3, p50: 3, p90: 5, p99: 5, max: 5 });
    expect(sample).toEqual([5, 1, 4, 2, 3]);
  });

  it('reports a single slow outlier at p99 of 100 values', () => {
    const sample = [...Array.from({ length: 99 }, () => 1), 500];
    const s = summarize(sample);
    expect(s.p50).toBe(1);
    expect(s.p99).toBe(1);
    expect(s.max).toBe(500);
    const s2 = summarize([...Array.from({ length: 98 }, () => 1), 400, 500]);
    expect(s2.p99).toBe(400);
  });

  it('counts an empty sample as zero with NaN figures', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.p99).toBeNaN();
    expect(s.max).toBeNaN();
  });
});

describe('pcts', () => {
  it('gives p50, p95 and p99 of an unsorted sample rounded to 0.01, without mutating it', () => {
    const sample = Array.from({ length: 100 }, (_, i) => (100 - i) / 3);
    expect(pcts(sample)).toEqual({ n: 100, p50: 16.67, p95: 31.67, p99: 33 });
    expect(sample[0]).toBeCloseTo(33.333, 3);
  });
});

describe('alternate', () => {
  it('warms each contender up, then runs them in turn in blocks of 50 until each has its samples', async () => {
    const order: string[] = [];
    const a: number[] = [];
    const b: number[] = [];
    await alternate(120, [
      { into: a, run: async () => void order.push('a') },
      { into: b, run: async () => void order.push('b') },
    ]);
    expect(a).toHaveLength(120);
    expect(b).toHaveLength(120);
    const runs = order
      .join('')
      .match(/a+|b+/g)!
      .map((r) => `${r[0]}${r.length}`);
    expect(runs).toEqual(['a10', 'b10', 'a50', 'b50', 'a50', 'b50', 'a20', 'b20']);
    expect(a.every((ms) => ms >= 0)).toBe(true);
  });
});
