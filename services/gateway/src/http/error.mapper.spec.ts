import { AppError } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { locateProblems, requestShape, toHttpError } from './error.mapper.js';

describe('toHttpError', () => {
  it('maps every AppError kind', () => {
    const cases: [AppError, number, unknown][] = [
      [AppError.invalid([{ loc: ['body', 'x'], msg: 'm', type: 'missing' }]), 422, { detail: [{ loc: ['body', 'x'], msg: 'm', type: 'missing' }] }],
      [new AppError('bad_request', 'bad key'), 400, { detail: 'bad key', code: 'bad_request' }],
      [AppError.notFound('nope'), 404, { detail: 'nope', code: 'not_found' }],
      [AppError.conflict('code_in_use', 'in use', { usage: 3 }), 409, { detail: 'in use', code: 'code_in_use', usage: 3 }],
      [new AppError('unauthenticated', 'who'), 401, { detail: 'who', code: 'unauthenticated' }],
      [new AppError('forbidden', 'no'), 403, { detail: 'no', code: 'forbidden' }],
      [AppError.unavailable('records is unavailable'), 503, { detail: 'records is unavailable', code: 'unavailable' }],
      [new AppError('rate_limited', 'slow down', { retryAfter: 2.2 }), 429, { detail: 'slow down', code: 'rate_limited' }],
      [new AppError('too_large', 'big'), 413, { detail: 'big', code: 'payload_too_large' }],
      [new AppError('internal', 'secret stack detail'), 500, { detail: 'internal error', code: 'internal' }],
    ];
    for (const [err, status, body] of cases) {
      const m = toHttpError(err);
      expect(m.status, err.kind).toBe(status);
      expect(m.body, err.kind).toEqual(body);
    }
    expect(toHttpError(new AppError('unauthenticated', 'x')).headers).toEqual({ 'www-authenticate': 'Bearer' });
    expect(toHttpError(new AppError('rate_limited', 'x', { retryAfter: 2.2 })).headers).toEqual({ 'retry-after': '3' });
  });

  it('maps body-parser and other client errors, never to 500', () => {
    expect(toHttpError(Object.assign(new Error('Unexpected token'), { type: 'entity.parse.failed', status: 400 })).status).toBe(422);
    expect(toHttpError(Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413 })).body).toEqual({
      detail: expect.any(String),
      code: 'payload_too_large',
    });
    expect(toHttpError(Object.assign(new Error('unsupported charset'), { type: 'charset.unsupported', status: 415 }))).toMatchObject({
      status: 415,
      body: { code: 'unsupported_media_type' },
    });
    expect(toHttpError(Object.assign(new URIError('bad'), { status: 400 })).status).toBe(400);
    expect(toHttpError(new TypeError('bug')).status).toBe(500);
  });

  it('adds path, query or body to the field paths services report', () => {
    const shape = requestShape('/entities/{entity_type}/{id}', { limit: '5' });
    const err = AppError.invalid([
      { loc: ['entity_type'], msg: 'm', type: 'string_pattern_mismatch' },
      { loc: ['limit'], msg: 'm', type: 'range' },
      { loc: ['project_id'], msg: 'm', type: 'link_not_found' },
      { loc: ['data', 'user'], msg: 'm', type: 'missing' },
      { loc: ['body', 'status'], msg: 'already located', type: 'string_type' },
    ]);
    expect((toHttpError(err, shape).body as { detail: { loc: unknown[] }[] }).detail.map((p) => p.loc)).toEqual([
      ['path', 'entity_type'],
      ['query', 'limit'],
      ['body', 'project_id'],
      ['body', 'data', 'user'],
      ['body', 'status'],
    ]);
    expect(locateProblems([{ loc: ['id'], msg: 'm', type: 'uuid_parsing' }])).toEqual([{ loc: ['body', 'id'], msg: 'm', type: 'uuid_parsing' }]);
    // A GET has no body: a name the client did not send is still a query parameter.
    const get = requestShape('/events', {}, 'GET');
    expect(locateProblems([{ loc: ['after'], msg: 'm', type: 'range' }], get)[0]!.loc).toEqual(['query', 'after']);
    // A service's too_many_errors entry names no field: it is located at the source alone.
    const more = { loc: [], msg: '5 more problems not listed (at most 100 are)', type: 'too_many_errors' };
    expect(locateProblems([more], shape)).toEqual([{ ...more, loc: ['body'] }]);
    expect(locateProblems([more], get)).toEqual([{ ...more, loc: ['query'] }]);
  });
});
