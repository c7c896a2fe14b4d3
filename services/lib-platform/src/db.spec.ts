import { describe, expect, it } from 'vitest';
import { dbError } from './db.js';
import { AppError } from './errors.js';

/** What `dbError` throws for `err`. */
function mapped(err: unknown): unknown {
  try {
    dbError(err);
  } catch (e) {
    return e;
  }
  throw new Error('dbError returned');
}

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('dbError', () => {
  it.each([
    ['ECONNREFUSED', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['ECONNRESET', withCode('ECONNRESET')],
    ['57P01 admin shutdown', withCode('57P01', 'terminating connection due to administrator command')],
    ['08006 connection failure', withCode('08006')],
    ['knex pool timeout', Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' })],
    ['terminated connection', new Error('Connection terminated unexpectedly')],
    ['pg connect timeout', new Error('timeout exceeded when trying to connect')],
    ['wrapped ECONNREFUSED message', new Error('select 1 - connect ECONNREFUSED 127.0.0.1:1')],
    ['MikroORM ConnectionException', Object.assign(new Error('boom'), { name: 'ConnectionException' })],
  ])('maps %s to unavailable', (_label, err) => {
    const e = mapped(err);
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).kind).toBe('unavailable');
    expect((e as AppError).message).toBe('database is unavailable');
    expect((e as AppError).cause).toBe(err);
  });

  it.each([
    ['unique violation', withCode('23505', 'duplicate key value violates unique constraint')],
    ['syntax error', withCode('42601', 'syntax error at or near "selec"')],
    ['plain error', new Error('something else')],
    ['a string', 'just a string'],
  ])('rethrows %s unchanged', (_label, err) => {
    expect(mapped(err)).toBe(err);
  });

  it('passes an AppError through unchanged, even one that reads like a lost connection', () => {
    const app = AppError.conflict('stale_write', 'changed');
    expect(mapped(app)).toBe(app);
    const peer = new AppError('internal', 'Connection terminated by records', { code: 'ECONNRESET' });
    expect(mapped(peer)).toBe(peer);
  });

  it('rethrows null and undefined as they are', () => {
    expect(mapped(null)).toBeNull();
    expect(mapped(undefined)).toBeUndefined();
  });
});
