import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { LoginThrottle, throttleDecision } from './login.throttle.js';
import type { LoginFailureStore, Reservation } from './ports.js';

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

/** The store in memory; `reserve` is atomic as the advisory lock makes it in PostgreSQL. */
class MemoryFailures implements LoginFailureStore {
  rows: { id: string; email: string; at: number; pending: boolean }[] = [];
  private next = 0;
  async reserve(email: string, at: Date, since: Date, max: number): Promise<Reservation> {
    const inWindow = this.rows.filter((r) => r.email === email && r.at > since.getTime());
    if (inWindow.length < max) {
      const id = String(++this.next);
      this.rows.push({ id, email, at: at.getTime(), pending: true });
      return { granted: true, id };
    }
    return { granted: false, failures: inWindow.filter((r) => !r.pending).map((r) => r.at), pending: inWindow.filter((r) => r.pending).length };
  }
  async fail(id: string) {
    this.rows.find((r) => r.id === id)!.pending = false;
  }
  async release(id: string) {
    this.rows = this.rows.filter((r) => r.id !== id);
  }
  async clear(email: string) {
    this.rows = this.rows.filter((r) => r.email !== email || r.pending);
  }
  failures(email: string) {
    return this.rows.filter((r) => r.email === email && !r.pending).length;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A login as LoginService runs it: reserve, check (taking `checkMs`), then settle. */
async function login(throttle: LoginThrottle, email: string, right: boolean, checkMs = 5): Promise<'ok' | 'wrong' | 'limited'> {
  let attempt;
  try {
    attempt = await throttle.claim(email);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('rate_limited');
    return 'limited';
  }
  await sleep(checkMs);
  if (right) {
    await attempt.succeeded();
    return 'ok';
  }
  await attempt.failed();
  return 'wrong';
}

const count = (results: string[], what: string) => results.filter((r) => r === what).length;

describe('LoginThrottle', () => {
  it('counts failures only and refuses beyond max, per email, until the window passes', async () => {
    let t = 5_000_000;
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 2, { now: () => t, pollMs: 1 });
    await (await throttle.claim('a@x.io')).failed(); // failure 1
    t += 10_000;
    await (await throttle.claim('a@x.io')).failed(); // failure 2
    t += 1;
    const err = await throttle.claim('a@x.io').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('rate_limited');
    expect((err as AppError).retryAfter).toBe(50);
    expect(store.rows).toHaveLength(2); // a refused attempt leaves nothing behind
    await (await throttle.claim('b@x.io')).failed(); // another email is unaffected
    t += 50_000;
    await throttle.claim('a@x.io');
  });

  it('a right password gives its slot back: correct logins never use up the limit', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 2, { pollMs: 1 });
    for (let i = 0; i < 10; i++) expect(await login(throttle, 'a@x.io', true, 0)).toBe('ok');
    expect(store.rows).toEqual([]);
  });

  it('20 parallel correct logins all get through', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 10, { pollMs: 1 });
    const results = await Promise.all(Array.from({ length: 20 }, () => login(throttle, 'p@x.io', true)));
    expect(count(results, 'ok')).toBe(20);
    expect(store.rows).toEqual([]);
  });

  it('30 parallel wrong passwords: at most max are checked, the rest are refused', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 10, { pollMs: 1 });
    const results = await Promise.all(Array.from({ length: 30 }, () => login(throttle, 'p@x.io', false)));
    expect(count(results, 'wrong')).toBe(10);
    expect(count(results, 'limited')).toBe(20);
    expect(store.failures('p@x.io')).toBe(10);
  });

  it('an attempt that waits too long for pending checks is refused, and an abandoned one does not count', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 1, { waitMs: 20, pollMs: 1 });
    const slow = await throttle.claim('s@x.io');
    const err = await throttle.claim('s@x.io').catch((e: unknown) => e);
    expect((err as AppError).kind).toBe('rate_limited');
    expect((err as AppError).retryAfter).toBe(1);
    expect((err as AppError).message).toBe('too many logins for this email at once; try again shortly');
    await slow.abandoned();
    expect(store.rows).toEqual([]);
    await throttle.claim('s@x.io');
  });

  it('a success clears the failures of its email', async () => {
    const store = new MemoryFailures();
    const throttle = new LoginThrottle(store, 2, { pollMs: 1 });
    expect(await login(throttle, 'a@x.io', false, 0)).toBe('wrong');
    expect(store.failures('a@x.io')).toBe(1);
    expect(await login(throttle, 'a@x.io', true, 0)).toBe('ok');
    expect(store.rows).toEqual([]);
  });
});
