import { describe, expect, it } from 'vitest';
import { createLogger, type AppError, type CallContext } from '@reelbase/lib-platform';
import { ApiKeyService } from './api-key.service.js';
import type { ApiKeyStore } from './ports.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const ADMIN = '0190a0b0-0000-7000-8000-000000000001';
const ARTIST = '0190a0b0-0000-7000-8000-000000000002';
const as = (userId: string, role: 'Admin' | 'Artist'): CallContext => ({ requestId: 't', principal: { userId, role, authKind: 'token' } });

function setup() {
  const rows: Array<Parameters<ApiKeyStore['insert']>[0] & { createdAt: Date; revokedAt: Date | null }> = [];
  const revoked: string[] = [];
  const store: ApiKeyStore = {
    insert: async (row) => {
      const r = { ...row, createdAt: new Date(NOW), revokedAt: null };
      rows.push(r);
      return r;
    },
    findById: async (id) => rows.find((r) => r.id === id) ?? null,
    listActive: async (userId) => rows.filter((r) => r.userId === userId && !r.revokedAt),
    revoke: async () => true,
    revokeAllOf: async (userId) => rows.filter((r) => r.userId === userId).map((r) => r.id),
  };
  const service = new ApiKeyService({
    store,
    sessions: { revokeBefore: async () => new Date(NOW) },
    users: { find: async (id) => (id === ARTIST || id === ADMIN ? { id } : null) },
    notifier: { apiKeyRevoked: async () => {}, userRevoked: async (e) => void revoked.push(e.user_id) },
    logger: createLogger('test', 'silent'),
    now: () => NOW,
  });
  return { service, rows, revoked };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as AppError,
  );

describe('ApiKeyService', () => {
  it('takes an expiry in the future as RFC 3339 with a zone, and lists it', async () => {
    const { service } = setup();
    const { key } = await service.issue('ci', as(ARTIST, 'Artist'), '2026-06-01T14:00:00+01:00');
    expect(key.expiresAt).toBe('2026-06-01T13:00:00.000Z');
    const later = await service.issue('ci', as(ARTIST, 'Artist'), '2026-06-01T12:00:00.001Z');
    expect(later.key.expiresAt).toBe('2026-06-01T12:00:00.001Z');
    expect((await service.list(as(ARTIST, 'Artist'))).map((k) => k.expiresAt)).toEqual(['2026-06-01T13:00:00.000Z', '2026-06-01T12:00:00.001Z']);
  });

  it.each([
    ['2026-06-01T12:00:00Z', 'datetime_future'],
    ['2026-06-01T14:00:00+02:00', 'datetime_future'],
    ['2020-01-01T00:00:00Z', 'datetime_future'],
    ['2030-02-30T00:00:00Z', 'datetime_parsing'],
    ['2030-01-01T24:00:00Z', 'datetime_parsing'],
    ['2030-01-01T23:60:00Z', 'datetime_parsing'],
    ['2030-01-01T23:00:60Z', 'datetime_parsing'],
    ['2030-01-01T00:00:00', 'datetime_parsing'],
    ['2030-01-01T00:00:00+24:00', 'datetime_parsing'],
    ['2030-01-01', 'datetime_parsing'],
    ['tomorrow', 'datetime_parsing'],
    ['', 'datetime_parsing'],
  ])('refuses expires_at %j (422 %s)', async (raw, type) => {
    const { service, rows } = setup();
    const err = await refusal(service.issue('ci', as(ARTIST, 'Artist'), raw));
    expect([err.kind, err.problems]).toEqual(['invalid', [expect.objectContaining({ loc: ['expires_at'], type })]]);
    expect(rows).toEqual([]);
  });

  it("lets an Admin list anyone's keys; anyone else only their own (403)", async () => {
    const { service } = setup();
    await service.issue('mine', as(ARTIST, 'Artist'));
    expect((await service.list(as(ADMIN, 'Admin'), ARTIST)).map((k) => [k.name, k.userId])).toEqual([['mine', ARTIST]]);
    expect((await service.list(as(ARTIST, 'Artist'), ARTIST)).length).toBe(1);
    expect((await refusal(service.list(as(ARTIST, 'Artist'), ADMIN))).kind).toBe('forbidden');
    expect((await refusal(service.list(as(ADMIN, 'Admin'), 'nope'))).kind).toBe('invalid');
  });

  it('issues an agent key with its pools, stores and lists them; a normal key has neither', async () => {
    const { service, rows } = setup();
    const agent = await service.issue('render-07', as(ARTIST, 'Artist'), undefined, { scope: 'agent', pools: ['gpu', 'cpu'] });
    expect(agent.key).toMatchObject({ scope: 'agent', pools: ['gpu', 'cpu'] });
    const anyPool = await service.issue('sync-01', as(ARTIST, 'Artist'), undefined, { scope: 'agent' });
    expect([anyPool.key.scope, anyPool.key.pools]).toEqual(['agent', undefined]);
    const plain = await service.issue('ci', as(ARTIST, 'Artist'));
    expect(['scope' in plain.key, 'pools' in plain.key]).toEqual([false, false]);
    expect(rows.map((r) => [r.name, r.scope, r.pools])).toEqual([
      ['render-07', 'agent', ['gpu', 'cpu']],
      ['sync-01', 'agent', null],
      ['ci', null, null],
    ]);
    expect((await service.list(as(ARTIST, 'Artist'))).map((k) => [k.scope, k.pools])).toEqual([
      ['agent', ['gpu', 'cpu']],
      ['agent', undefined],
      [undefined, undefined],
    ]);
  });

  it.each([
    [{ scope: 'admin' }, [['scope', 'literal_error']]],
    [{ pools: ['gpu'] }, [['pools', 'value_error']]],
    [{ scope: 'agent', pools: [] }, [['pools', 'too_short']]],
    [{ scope: 'agent', pools: Array.from({ length: 51 }, (_, i) => `p${i}`) }, [['pools', 'too_long']]],
    [
      { scope: 'agent', pools: ['gpu', ' ', 'x'.repeat(65), 'gpu'] },
      [
        ['pools.1', 'string_too_short'],
        ['pools.2', 'string_too_long'],
        ['pools.3', 'value_error'],
      ],
    ],
  ])('refuses the access %j with every problem at once, and stores nothing', async (access, problems) => {
    const { service, rows } = setup();
    const err = await refusal(service.issue('', as(ARTIST, 'Artist'), 'tomorrow', access));
    expect(err.kind).toBe('invalid');
    expect(err.problems.map((p) => [p.loc.join('.'), p.type])).toEqual([['name', 'missing'], ['expires_at', 'datetime_parsing'], ...problems]);
    expect(rows).toEqual([]);
  });

  it('revokes every session and key of a user for an Admin only, and announces it', async () => {
    const { service, revoked } = setup();
    await service.issue('a', as(ARTIST, 'Artist'));
    await service.issue('b', as(ARTIST, 'Artist'));
    expect((await refusal(service.revokeUserSessions(ARTIST, as(ARTIST, 'Artist')))).kind).toBe('forbidden');
    expect((await refusal(service.revokeUserSessions('0190a0b0-0000-7000-8000-0000000000ff', as(ADMIN, 'Admin')))).kind).toBe('not_found');
    expect((await refusal(service.revokeUserSessions('nope', as(ADMIN, 'Admin')))).kind).toBe('not_found');
    expect(revoked).toEqual([]);
    expect(await service.revokeUserSessions(ARTIST, as(ADMIN, 'Admin'))).toEqual({ apiKeysRevoked: 2, tokensRevokedBefore: '2026-06-01T12:00:00.000Z' });
    expect(revoked).toEqual([ARTIST]);
  });
});
