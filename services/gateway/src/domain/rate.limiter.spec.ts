import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate.limiter.js';

describe('RateLimiter', () => {
  it('allows the burst, then the sustained rate, per key', () => {
    let t = 0;
    const rl = new RateLimiter(10, 3, () => t);
    expect([rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([0, 0, 0]);
    const wait = rl.take('a');
    expect(wait).toBeCloseTo(0.1, 5);
    expect(rl.take('b')).toBe(0);
    t += 0.1;
    expect(rl.take('a')).toBe(0);
    expect(rl.take('a')).toBeGreaterThan(0);
    t += 100;
    expect([rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([0, 0, 0]);
    expect(rl.take('a')).toBeGreaterThan(0);
  });

  it('peeks without taking, gives a token back, and keeps a bounded number of buckets', () => {
    let t = 0;
    const rl = new RateLimiter(1, 2, () => t);
    expect(rl.peek('a')).toBe(0);
    rl.take('a');
    rl.take('a');
    expect(rl.peek('a')).toBeCloseTo(1, 5);
    expect(rl.peek('a')).toBeCloseTo(1, 5);
    rl.refund('a');
    expect(rl.peek('a')).toBe(0);
    expect(rl.take('a')).toBe(0);
    expect(rl.take('a')).toBeGreaterThan(0);

    // A flood of keys whose buckets are not full: the map stays bounded.
    const many = new RateLimiter(0.001, 1, () => t);
    for (let i = 0; i < 150_000; i++) many.take(`k${i}`);
    expect(many.size).toBeLessThanOrEqual(100_000);
  });
});
