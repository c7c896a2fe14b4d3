import { describe, expect, it } from 'vitest';
import { AuthenticationError, PermissionDenied, RateLimited, ServerError, ValidationError, errorFromAnswer, retryAfterSeconds } from './errors.js';

describe('errors', () => {
  it('picks the class by status and keeps status, code and detail', () => {
    const h = new Headers({ 'x-request-id': 'req-1', 'retry-after': '3' });
    const e401 = errorFromAnswer('GET', '/me', 401, { detail: 'bad token', code: 'unauthenticated' }, h);
    expect(e401).toBeInstanceOf(AuthenticationError);
    expect([e401.status, e401.code, e401.detail, e401.requestId]).toEqual([401, 'unauthenticated', 'bad token', 'req-1']);
    expect(errorFromAnswer('GET', '/x', 403, { detail: 'no', code: 'forbidden' }, h)).toBeInstanceOf(PermissionDenied);
    expect(errorFromAnswer('GET', '/x', 503, { detail: 'down', code: 'unavailable' }, h)).toBeInstanceOf(ServerError);
    const rl = errorFromAnswer('GET', '/x', 429, { detail: 'slow', code: 'rate_limited' }, h) as RateLimited;
    expect(rl).toBeInstanceOf(RateLimited);
    expect(rl.retryAfterSeconds).toBe(3);
  });

  it('lists every problem of a 422', () => {
    const body = {
      detail: [
        { loc: ['body', 'data', 'code'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'status'], msg: 'bad', type: 'value_error' },
      ],
    };
    const e = errorFromAnswer('POST', '/entities/Shot', 422, body, new Headers()) as ValidationError;
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.problems).toHaveLength(2);
    expect(e.detail).toContain('body.data.code: Field required');
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterSeconds('2')).toBe(2);
    expect(retryAfterSeconds(new Date(10_000).toUTCString(), 4_000)).toBe(6);
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds(null)).toBeUndefined();
  });
});
