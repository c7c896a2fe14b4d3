import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.js';
import { asCrossed, fromServiceError, statusName, toServiceError } from './status.js';

/** A ServiceError as grpc-js hands it to a client callback. */
const serviceError = (code: status, details: string, metadata = new Metadata()): ServiceError =>
  Object.assign(new Error(`${code} ${status[code]}: ${details}`), { code, details, metadata });

describe('toServiceError / fromServiceError', () => {
  it('round-trips an AppError through status and metadata', () => {
    const thrown = new AppError('conflict', 'quota reached', { code: 'quota', extra: { usage: 3, limit: 3 } });
    const se = toServiceError(thrown);
    expect(se.code).toBe(status.FAILED_PRECONDITION);
    expect(se.details).toBe('quota reached');
    const back = fromServiceError(serviceError(se.code!, se.details!, se.metadata), 'records');
    expect(back).toMatchObject({ kind: 'conflict', code: 'quota', extra: { usage: 3, limit: 3 }, message: 'quota reached' });
  });

  it('hides the message of anything that is not an AppError', () => {
    const se = toServiceError(new TypeError('cannot read x of undefined'));
    expect(se.code).toBe(status.INTERNAL);
    expect(se.details).toBe('internal error');
  });

  it('maps bare statuses (no platform metadata) by code', () => {
    expect(fromServiceError(serviceError(status.ALREADY_EXISTS, 'dup'), 'auth')).toMatchObject({ kind: 'conflict', message: 'dup' });
    expect(fromServiceError(serviceError(status.PERMISSION_DENIED, 'no'), 'auth').kind).toBe('forbidden');
    expect(fromServiceError(serviceError(status.UNIMPLEMENTED, 'no such method'), 'auth').kind).toBe('internal');
    const late = fromServiceError(serviceError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'), 'auth');
    expect(late).toMatchObject({ kind: 'unavailable', message: 'auth is unavailable (DEADLINE_EXCEEDED)' });
  });

  it('a bare RESOURCE_EXHAUSTED (grpc-js message size) is internal; only our own rate limit is rate_limited', () => {
    const size = fromServiceError(serviceError(status.RESOURCE_EXHAUSTED, 'Received message larger than max (17424021 vs 16777216)'), 'events');
    expect(size.kind).toBe('internal');
    const ours = toServiceError(new AppError('rate_limited', 'too many failed logins', { retryAfter: 7 }));
    expect(ours.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(fromServiceError(serviceError(ours.code!, ours.details!, ours.metadata), 'auth')).toMatchObject({ kind: 'rate_limited', retryAfter: 7 });
  });

  it('falls back to the status code when the detail metadata is not JSON', () => {
    const md = new Metadata();
    md.set('x-error-bin', Buffer.from('{not json'));
    expect(fromServiceError(serviceError(status.NOT_FOUND, 'gone', md), 'records')).toMatchObject({ kind: 'not_found', message: 'gone' });
  });

  it('asCrossed is the error a caller rebuilds: the message clipped, the problems fitted to the trailer budget', () => {
    const problems = Array.from({ length: 100 }, (_, i) => ({ loc: ['data', `f${i}`], msg: 'x'.repeat(900), type: 'value_error', input: undefined }));
    for (const thrown of [
      new AppError('invalid', 'm'.repeat(5000), { problems }),
      new AppError('not_found', 'gone', { extra: { index: 3, at: new Date(0) } }),
    ]) {
      const se = toServiceError(thrown);
      const back = fromServiceError(serviceError(se.code!, se.details!, se.metadata), 'records');
      const crossed = asCrossed(thrown);
      expect(JSON.stringify([crossed.kind, crossed.message, crossed.code, crossed.problems, crossed.extra, crossed.retryAfter])).toBe(
        JSON.stringify([back.kind, back.message, back.code, back.problems, back.extra, back.retryAfter]),
      );
    }
    expect(asCrossed(new AppError('invalid', 'm', { problems })).problems.length).toBeLessThan(100);
  });

  it('names statuses for metric labels', () => {
    expect(statusName(status.OK)).toBe('OK');
    expect(statusName(status.RESOURCE_EXHAUSTED)).toBe('RESOURCE_EXHAUSTED');
  });
});
