import { describe, expect, it } from 'vitest';
import { ConnectionError } from './errors.js';
import { DEFAULT_RETRY, mayRetry, retryDelayMs } from './retry.policy.js';

const reset = new ConnectionError('cut', { code: 'ECONNRESET' });
const refused = new ConnectionError('refused', { code: 'ECONNREFUSED' });

describe('retry policy', () => {
  it('retries reads and keyed POSTs after a cut connection, never an unkeyed POST or a PATCH', () => {
    expect(mayRetry('GET', reset, false)).toBe(true);
    expect(mayRetry('POST', reset, true)).toBe(true);
    expect(mayRetry('POST', reset, false)).toBe(false);
    expect(mayRetry('PATCH', reset, false)).toBe(false);
    // Nothing was sent: always safe.
    expect(mayRetry('PATCH', refused, false)).toBe(true);
  });

  it('retries 429, 502, 503, 504 only; a PATCH only on 429 and 503', () => {
    for (const s of [429, 502, 503, 504]) expect(mayRetry('GET', { status: s }, false)).toBe(true);
    for (const s of [400, 401, 403, 404, 409, 422, 500]) expect(mayRetry('GET', { status: s }, false)).toBe(false);
    expect(mayRetry('PATCH', { status: 502 }, false)).toBe(false);
    expect(mayRetry('PATCH', { status: 503 }, false)).toBe(true);
    // A keyed POST whose first attempt is still running: asked again; any other 409 is final.
    expect(mayRetry('POST', { status: 409, code: 'idempotency_in_progress' }, true)).toBe(true);
    expect(mayRetry('POST', { status: 409, code: 'idempotency_conflict' }, true)).toBe(false);
  });

  it('honours Retry-After, and backs off exponentially with jitter otherwise', () => {
    expect(retryDelayMs(1, DEFAULT_RETRY, '2')).toBe(2000);
    expect(retryDelayMs(1, DEFAULT_RETRY, '100000')).toBeUndefined();
    expect(retryDelayMs(1, DEFAULT_RETRY, null, () => 1)).toBe(250);
    expect(retryDelayMs(3, DEFAULT_RETRY, null, () => 1)).toBe(1000);
    expect(retryDelayMs(3, DEFAULT_RETRY, null, () => 0)).toBe(500);
    expect(retryDelayMs(20, DEFAULT_RETRY, null, () => 1)).toBe(10_000);
  });
});
