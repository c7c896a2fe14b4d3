import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { LoginThrottle, throttleDecision, type LoginFailureStore } from './login.throttle.js';

describe('throttleDecision', () => {
  const now = 1_000_000;

  it('allows while fewer than max failures are in the window', () => {
    expect(throttleDecision([], now, 3)).toEqual({ allowed: true });
    expect(throttleDecision([now - 1000, now - 2000], now, 3)).toEqual({ allowed: true });
  });

  it('ignores failures older than the window', () => {
    expect(throttleDecision([now - 1000, now - 61_000, now - 70_000], now, 3)).toEqual({ allowed: true });
    expect(throttleDecision([now - 60_000, now - 1, now - 2], now, 3)).toEqual({ allowed: true });
  });

  it('refuses at max failures until the max-th newest leaves the window', () => {
    // Newest three: 1 s, 5 s and 20 s ago; the third expires in 40 s.
    expect(throttleDecision([now - 1000, now - 5000, now - 20_000], now, 3)).toEqual({ allowed: false, retryAfter: 40 });
    expect(throttleDecision([now - 20_000, now - 1000, now - 5000, now - 59_000], now, 3)).toEqual({ allowed: false, retryAfter: 40 });
  });

  it('rounds the wait up and never below one second', () => {
    expect(throttleDecision([now - 59_999, now - 59_999], now, 2)).toEqual({ allowed: false, retryAfter: 1 });
    expect(throttleDecision([now - 100, now - 100], now, 2)).toEqual({ allowed: false, retryAfter: 60 });
  });
});

class MemoryFailures implements LoginFailureStore {
  rows: { email: string; at: number }[] = [];
  async recent(email: string, since: Date, limit: number) {
    return this.rows
      .filter((r) => r.email === email && r.at > since.getTime())
      .map((r) => r.at)
      .sort((a, b) => b - a)
      .slice(0, limit);
  }
  async add(email: string, at: Date) {
    this.rows.push({ email, at: at.getTime() });
  }
  async remove(email: string, at: Date) {
    const i = this.rows.findIndex((r) => r.email === email && r.at === at.getTime());
    if (i >= 0) this.rows.splice(i, 1);
  }
  async clear(email: string) {
    this.rows = this.rows.filter((r) => r.email !== email);
  }
}

describe('LoginThrottle', () => {
  it('counts each attempt up front and refuses beyond max, per email, until the window passes', async () => {
    let t = 5_000_000;
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 2, () => t);
    await throttle.claim('a@x.io'); // failure 1 (the claim stays: the password was wrong)
    t += 10_000;
    await throttle.claim('a@x.io'); // failure 2
    t += 1;
    const err = await throttle.claim('a@x.io').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('rate_limited');
    expect((err as AppError).retryAfter).toBe(50);
    expect(store.rows).toHaveLength(2); // a refused attempt is not left counted
    await throttle.claim('b@x.io'); // another email is unaffected
    t += 50_000;
    await throttle.claim('a@x.io');
  });

  it('lets no more than max parallel attempts through', async () => {
    const store = new MemoryFailures();
    let t = 1_000_000;
    const throttle = new LoginThrottle(store, 3, () => ++t);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => throttle.claim('p@x.io')));
    // Every attempt is counted before any is judged, so a burst cannot slip past the limit.
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeLessThanOrEqual(3);
    expect(results.filter((r) => r.status === 'rejected').length).toBeGreaterThanOrEqual(17);
  });

  it('reset clears the failures of one email', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 1);
    await throttle.claim('a@x.io');
    await expect(throttle.claim('a@x.io')).rejects.toMatchObject({ kind: 'rate_limited' });
    await throttle.reset('a@x.io');
    await throttle.claim('a@x.io');
  });
});
