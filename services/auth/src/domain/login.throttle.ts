/**
 * Per-email limit on failed logins: once `max` failures fall within the window, further
 * attempts are refused with 429 until the oldest of them leaves the window.
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
  clear(email: string): Promise<void>;
}

export class LoginThrottle {
  constructor(
    private readonly store: LoginFailureStore,
    private readonly max: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws `rate_limited` (with retryAfter) when `email` has too many recent failures. */
  async check(email: string): Promise<void> {
    const now = this.now();
    const failures = await this.store.recent(email, new Date(now - THROTTLE_WINDOW_MS), this.max);
    const decision = throttleDecision(failures, now, this.max);
    if (!decision.allowed) {
      throw new AppError('rate_limited', 'too many failed logins; try again later', { retryAfter: decision.retryAfter });
    }
  }

  recordFailure(email: string): Promise<void> {
    return this.store.add(email, new Date(this.now()));
  }

  reset(email: string): Promise<void> {
    return this.store.clear(email);
  }
}
