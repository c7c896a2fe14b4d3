/**
 * When a failed exchange may be sent again, and after how long. Only requests that cannot do a
 * thing twice are retried: reads, PUT and DELETE (idempotent by nature), and every POST, which
 * carries an `Idempotency-Key` (the server answers a repeated key with the first answer). A PATCH
 * is retried only when the server certainly did not apply it (429, 503, or no connection made).
 */
import { ConnectionError, RateLimited, ReelbaseError, retryAfterSeconds } from './errors.js';

export interface RetryOptions {
  /** Further attempts after the first (default 5). */
  retries: number;
  /** First back-off delay (default 250 ms); doubled each attempt, with jitter. */
  backoffMs: number;
  /** Longest back-off delay (default 10 s). */
  maxBackoffMs: number;
  /** Longest `Retry-After` honoured (default 120 s); a longer one fails at once. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { retries: 5, backoffMs: 250, maxBackoffMs: 10_000, maxRetryAfterMs: 120_000 };

const RETRY_STATUSES = new Set([429, 502, 503, 504]);
/** Connection failures where nothing reached the server. */
const NOT_SENT = new Set(['ECONNREFUSED', 'connect_timeout', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether `method` may be sent again after a failure of this kind (an error answer's status, or a connection failure). */
export function mayRetry(method: string, failure: { status: number; code?: string } | ConnectionError, hasIdempotencyKey: boolean): boolean {
  const m = method.toUpperCase();
  if (failure instanceof ConnectionError) {
    if (NOT_SENT.has(failure.code)) return true;
    return m === 'GET' || m === 'HEAD' || m === 'PUT' || m === 'DELETE' || m === 'OPTIONS' || (m === 'POST' && hasIdempotencyKey);
  }
  // The first request with this key is still running on the server: ask again for its answer.
  if (failure.status === 409 && failure.code === 'idempotency_in_progress') return m === 'POST' && hasIdempotencyKey;
  if (!RETRY_STATUSES.has(failure.status)) return false;
  if (m === 'PATCH') return failure.status === 429 || failure.status === 503;
  if (m === 'POST') return hasIdempotencyKey || failure.status === 429;
  return true;
}

/**
 * Milliseconds to wait before attempt `attempt` (1 = the first retry): the server's `Retry-After`
 * when it gave one, else exponential back-off with full jitter. Undefined: do not wait that long.
 */
export function retryDelayMs(attempt: number, opts: RetryOptions, retryAfter?: string | null, random = Math.random): number | undefined {
  const after = retryAfterSeconds(retryAfter);
  if (after !== undefined) {
    const ms = after * 1000;
    return ms > opts.maxRetryAfterMs ? undefined : ms;
  }
  const cap = Math.min(opts.maxBackoffMs, opts.backoffMs * 2 ** (attempt - 1));
  return Math.round(cap / 2 + random() * (cap / 2));
}

/** The `Retry-After` of an error, as text, when it has one. */
export function retryAfterOf(err: ReelbaseError): string | undefined {
  return err instanceof RateLimited && err.retryAfterSeconds !== undefined ? String(err.retryAfterSeconds) : undefined;
}
