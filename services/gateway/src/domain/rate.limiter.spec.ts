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

  it('charges the rest of a heavy request after admitting it: the balance goes below zero, bounded, and the sustained rate holds', () => {
    let t = 0;
    const rl = new RateLimiter(10, 20, () => t);
    expect(rl.take('a')).toBe(0);
    rl.charge('a', 49); // a request of weight 50 with 20 in the bucket
    // 31 short of one token at 10 per second.
    expect(rl.take('a')).toBeCloseTo(3.1, 5);
    t += 3.1;
    expect(rl.take('a')).toBe(0);
    // Nothing to charge for a key never admitted, or for no weight.
    rl.charge('b', 10);
    rl.charge('a', 0);
    expect(rl.take('b')).toBe(0);
    // The debt is bounded: 60 s of refill at most.
    rl.charge('a', 1e9);
    expect(rl.take('a')).toBeCloseTo(60.1, 5);
  });
});
