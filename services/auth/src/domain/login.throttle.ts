/**
 * Per-email limit on failed logins: once `max` failures fall within the window, further
 * attempts are refused with 429 until the oldest of them leaves the window. Each attempt is
 * counted BEFORE its password is checked (a claim), so parallel attempts see each other and
 * cannot all slip under the limit; a successful login clears the count.
 */
import { AppError } from '@reelbase/lib-platform';

export const THROTTLE_WINDOW_MS = 60_000;

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfter: number };

/**
 * Decides from the times (ms) of the newest failures (at most `max` of them are needed)
 * whether another attempt at `now` is allowed, and if not how many seconds to wait.
 */
export function throttleDecision(failures: number[], now: number, max: number, windowMs = THROTTLE_WINDOW_MS): ThrottleDecision {
  const inWindow = failures.filter((t) => t > now - windowMs).sort((a, b) => b - a);
  if (inWindow.length < max) return { allowed: true };
  // The attempt is allowed again once fewer than `max` failures remain in the window,
  // i.e. when the max-th newest failure expires.
  const expires = inWindow[max - 1]! + windowMs;
  return { allowed: false, retryAfter: Math.max(1, Math.ceil((expires - now) / 1000)) };
}

/** Where failures are kept (shared by every replica). */
export interface LoginFailureStore {
  recent(email: string, since: Date, limit: number): Promise<number[]>;
  add(email: string, at: Date): Promise<void>;
  /** Removes one failure of `email` recorded at exactly `at`. */
  remove(email: string, at: Date): Promise<void>;
  clear(email: string): Promise<void>;
}

export class LoginThrottle {
  constructor(
    private readonly store: LoginFailureStore,
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Counts an attempt for `email` as a failure, then throws `rate_limited` (with retryAfter)
   * when, counting it, more than `max` failures are in the window; a refused attempt is not
   * left counted. A login that succeeds calls {@link reset}.
   */
  async claim(email: string): Promise<void> {
    const at = new Date(this.now());
    await this.store.add(email, at);
    const failures = await this.store.recent(email, new Date(at.getTime() - THROTTLE_WINDOW_MS), this.max + 1);
    const decision = throttleDecision(failures, at.getTime(), this.max + 1);
    if (!decision.allowed) {
      await this.store.remove(email, at).catch(() => {});
      throw new AppError('rate_limited', 'too many failed logins; try again later', { retryAfter: decision.retryAfter });
    }
  }

  reset(email: string): Promise<void> {
    return this.store.clear(email);
  }
}
