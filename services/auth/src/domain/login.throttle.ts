/**
 * Per-email limit on failed logins (`max` per minute, docs/architecture.md "Auth decisions").
 * Only failures count, yet parallel guesses must not slip past the limit, so every attempt
 * first RESERVES a slot: reservations and failures in the window together may not pass `max`.
 * A wrong password turns its reservation into a failure; a right one gives it back (and clears
 * the email's failures). An attempt that finds the window full of reservations still being
 * checked waits for them to settle, so parallel correct logins all get through while parallel
 * wrong ones stop at `max` checked.
 */
import { AppError } from '@reelbase/lib-platform';
import type { LoginFailureStore } from './ports.js';

export const THROTTLE_WINDOW_MS = 60_000;
/** Longest an attempt waits for other attempts' checks before it is refused. */
export const RESERVATION_WAIT_MS = 3_000;
/** How often a waiting attempt looks again. */
export const RESERVATION_POLL_MS = 25;

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

/** One reserved attempt; exactly one of its methods is called once its outcome is known. */
export interface LoginAttempt {
  /** The password was wrong (or the user may not log in): counts as a failure. */
  failed(): Promise<void>;
  /** The login succeeded: the reservation and the email's failures are cleared. */
  succeeded(): Promise<void>;
  /** The check could not be made (a dependency failed): the attempt does not count. */
  abandoned(): Promise<void>;
}

export interface ThrottleOptions {
  now?: () => number;
  waitMs?: number;
  pollMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LoginThrottle {
  private readonly now: () => number;
  private readonly waitMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly store: LoginFailureStore,
    private readonly max: number,
    opts: ThrottleOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.waitMs = opts.waitMs ?? RESERVATION_WAIT_MS;
    this.pollMs = opts.pollMs ?? RESERVATION_POLL_MS;
  }

  /**
   * Reserves a slot for an attempt on `email` before its password is checked; throws
   * `rate_limited` (with retryAfter) when `max` failures are in the window, or when the slots
   * taken by attempts still being checked do not free up within the wait.
   */
  async claim(email: string): Promise<LoginAttempt> {
    const giveUp = this.now() + this.waitMs;
    for (;;) {
      const at = this.now();
      const r = await this.store.reserve(email, new Date(at), new Date(at - THROTTLE_WINDOW_MS), this.max);
      if (r.granted) return this.attempt(email, r.id);
      const decision = throttleDecision(r.failures, at, this.max);
      if (!decision.allowed) throw limited(decision.retryAfter);
      // The window is full only with attempts still being checked: wait for their outcome.
      if (r.pending === 0 || this.now() >= giveUp) {
        throw new AppError('rate_limited', 'too many logins for this email at once; try again shortly', { retryAfter: 1 });
      }
      await sleep(this.pollMs);
    }
  }

  private attempt(email: string, id: string): LoginAttempt {
    const { store } = this;
    return {
      failed: () => store.fail(id),
      succeeded: async () => {
        await store.release(id);
        await store.clear(email);
      },
      abandoned: () => store.release(id),
    };
  }
}

function limited(retryAfter: number): AppError {
  return new AppError('rate_limited', 'too many failed logins; try again later', { retryAfter });
}
