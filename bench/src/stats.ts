/**
 * Latency summaries. Percentiles use the nearest-rank method on the sorted sample (the
 * smallest value with at least p% of the sample at or below it), which never invents a
 * value that was not measured and matches what most load tools print.
 */

/** Nearest-rank percentile of an ascending-sorted sample; NaN for an empty sample. */
export function percentile(sorted: readonly number[], p: number): number {
  if (p < 0 || p > 100 || Number.isNaN(p)) throw new RangeError(`percentile out of range: ${p}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** Summary of a latency sample, in the sample's unit. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Sorts a copy of `values` and summarises it; every field but `count` is NaN when empty. */
export function summarize(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? Number.NaN : sorted.reduce((s, v) => s + v, 0) / sorted.length;
  return {
    count: sorted.length,
    mean,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

/** Samples taken side by side: each contender in turn runs a block of 50, until each has `samples`, after 10 unmeasured each. */
export async function alternate(samples: number, contenders: { into: number[]; run: () => Promise<unknown> }[]): Promise<void> {
  for (const c of contenders) for (let i = 0; i < 10; i++) await c.run();
  for (let done = 0; done < samples; done += 50) {
    for (const c of contenders) {
      for (let i = done; i < Math.min(samples, done + 50); i++) {
        const s = performance.now();
        await c.run();
        c.into.push(performance.now() - s);
      }
    }
  }
}

/** The percentiles a query benchmark prints, in the sample's unit rounded to 0.01, and the sample's size. */
export interface Pcts {
  n: number;
  p50: number;
  p95: number;
  p99: number;
}

/** p50, p95 and p99 of an unsorted sample (not mutated). */
export function pcts(values: readonly number[]): Pcts {
  const s = [...values].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 100) / 100;
  return { n: s.length, p50: r(percentile(s, 50)), p95: r(percentile(s, 95)), p99: r(percentile(s, 99)) };
}
