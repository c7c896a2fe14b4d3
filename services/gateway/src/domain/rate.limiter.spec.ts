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
});
