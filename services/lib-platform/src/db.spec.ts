import { describe, expect, it } from 'vitest';
import { dbError, guarded } from './db.js';
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
    // A transaction's COMMIT on a client whose connection broke while PostgreSQL restarted (knex prefixes the SQL).
    ['broken client', new Error('COMMIT; - Client has encountered a connection error and is not queryable')],
    ['closed client', new Error('Client was closed and is not queryable')],
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

describe('guarded', () => {
  it('resolves with the query result', async () => {
    await expect(guarded(async () => 42)).resolves.toBe(42);
  });

  it('maps a lost connection to unavailable, keeping the cause', async () => {
    const err = withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');
    const caught = await guarded(() => Promise.reject(err)).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).kind).toBe('unavailable');
    expect((caught as AppError).cause).toBe(err);
  });

  it('maps a value PostgreSQL cannot store to invalid', async () => {
    const caught = await guarded(() => Promise.reject(withCode('22P05', 'unsupported Unicode escape sequence'))).catch((e: unknown) => e);
    expect((caught as AppError).kind).toBe('invalid');
  });

  it('maps a listed SQLSTATE to the store’s own error, before dbError', async () => {
    const conflict = AppError.conflict('duplicate_code', 'taken');
    const caught = await guarded(() => Promise.reject(withCode('23505')), { '23505': () => conflict }).catch((e: unknown) => e);
    expect(caught).toBe(conflict);
  });

  it('rethrows anything else unchanged, and AppErrors as they are', async () => {
    const other = withCode('42601', 'syntax error');
    await expect(guarded(() => Promise.reject(other), { '23505': () => AppError.conflict('x', 'y') })).rejects.toBe(other);
    const app = AppError.notFound('record not found');
    await expect(guarded(() => Promise.reject(app))).rejects.toBe(app);
  });

  it('turns a synchronous throw into the same mapping', async () => {
    const caught = await guarded(() => {
      throw new Error('Connection terminated unexpectedly');
    }).catch((e: unknown) => e);
    expect((caught as AppError).kind).toBe('unavailable');
  });
});
