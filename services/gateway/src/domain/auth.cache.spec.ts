import { AppError } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { authChangesOf, createGatewayBus } from '../live/gateway.bus.js';
import { createLogger } from '@reelbase/lib-platform';
import { AuthCache, tokenHash, type AuthAnswerPrincipal } from './auth.cache.js';

const ctx = { requestId: 'r' };
const principal = (over: Partial<AuthAnswerPrincipal> = {}): AuthAnswerPrincipal => ({
  userId: 'u1',
  role: 'Artist',
  authKind: 'token',
  email: 'a@example.com',
  cacheSeconds: 60,
  ...over,
});

function setup(table: Record<string, AuthAnswerPrincipal>, maxSeconds = 5) {
  let clock = 1_000_000;
  const calls: string[] = [];
  let down = false;
  const cache = new AuthCache(
    async (token) => {
      calls.push(token);
      await Promise.resolve();
      if (down) throw AppError.unavailable('auth is unavailable');
      const p = table[token];
      if (!p) throw new AppError('unauthenticated', 'bad token');
      return { principal: p };
    },
    maxSeconds,
    () => clock,
  );
  return { cache, calls, advance: (ms: number) => (clock += ms), setDown: (v: boolean) => (down = v) };
}

describe('AuthCache', () => {
  it("carries an agent key's scope and pools into the principal; any scope is taken as agent, no pools as any pool", async () => {
    const { cache } = setup({
      agent: principal({ authKind: 'api_key', apiKeyId: 'k1', access: { scope: 'agent', pools: ['gpu', 'cpu'] } }),
      anyPool: principal({ authKind: 'api_key', apiKeyId: 'k2', access: { scope: 'agent', pools: [] } }),
      unknown: principal({ authKind: 'api_key', apiKeyId: 'k3', access: { scope: 'future-scope', pools: [] } }),
      plain: principal({ authKind: 'api_key', apiKeyId: 'k4' }),
    });
    expect((await cache.authenticate('agent', ctx)).principal).toMatchObject({ scope: 'agent', pools: ['gpu', 'cpu'] });
    const anyPool = (await cache.authenticate('anyPool', ctx)).principal;
    expect([anyPool.scope, 'pools' in anyPool]).toEqual(['agent', false]);
    expect((await cache.authenticate('unknown', ctx)).principal.scope).toBe('agent');
    const plain = (await cache.authenticate('plain', ctx)).principal;
    expect(['scope' in plain, 'pools' in plain]).toEqual([false, false]);
  });

  it('caches for min(cache_seconds, AUTH_CACHE_SECONDS)', async () => {
    const { cache, calls, advance } = setup({ t: principal({ cacheSeconds: 60 }), s: principal({ userId: 'u2', cacheSeconds: 2 }) }, 5);
    await cache.authenticate('t', ctx);
    advance(3_900);
    await cache.authenticate('t', ctx);
    expect(calls).toEqual(['t']);
    // Past its time (and never seen in its last fifth): asked again before answering.
    advance(1_200);
    await cache.authenticate('t', ctx);
    expect(calls).toEqual(['t', 't']);
    await cache.authenticate('s', ctx);
    advance(2_100);
    await cache.authenticate('s', ctx);
    expect(calls.filter((c) => c === 's')).toHaveLength(2);
  });

  it('renews an entry in its last fifth beside the answer, so a token in steady use never waits for auth', async () => {
    let clock = 1_000_000;
    const calls: string[] = [];
    let gate: Promise<void> | undefined;
    let down = false;
    const valid = new Set(['t', 'r']);
    const cache = new AuthCache(
      async (token) => {
        calls.push(token);
        if (gate) await gate;
        if (down) throw AppError.unavailable('auth is unavailable');
        if (!valid.has(token)) throw new AppError('unauthenticated', 'revoked');
        return { principal: principal({ userId: token }) };
      },
      5,
      () => clock,
      { seconds: 30, max: 10 },
    );
    await cache.authenticate('t', ctx);
    clock += 4_100;
    // auth is slow now: the request is answered from the cache all the same, and one renewal runs.
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    const answered = await cache.authenticate('t', ctx);
    expect(answered.principal.userId).toBe('t');
    await cache.authenticate('t', ctx);
    expect(calls).toEqual(['t', 't']);
    open();
    gate = undefined;
    await new Promise((r) => setImmediate(r));
    // Renewed at 4.1 s for another 5 s: nothing more is asked until its own last fifth (from 8.1 s).
    clock += 3_900;
    await cache.authenticate('t', ctx);
    expect(calls).toEqual(['t', 't']);
    expect(cache.hasValid('t')).toBe(true);

    // auth down during a renewal: the entry serves until its own expiry, and is not renewed again
    // with every request meanwhile (one try per entry).
    down = true;
    const before = calls.length;
    clock += 300; // 8.3 s: in the renewed entry's last fifth
    await cache.authenticate('t', ctx);
    await new Promise((r) => setImmediate(r));
    await cache.authenticate('t', ctx);
    await cache.authenticate('t', ctx);
    expect(calls.length).toBe(before + 1);
    expect(cache.hasValid('t')).toBe(true);
    down = false;

    // A token revoked meanwhile: the renewal's refusal drops the entry at once and is remembered.
    await cache.authenticate('r', ctx);
    clock += 4_100;
    valid.delete('r');
    await cache.authenticate('r', ctx);
    await new Promise((r) => setImmediate(r));
    expect(cache.hasValid('r')).toBe(false);
    await expect(cache.authenticate('r', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(calls.filter((c) => c === 'r')).toHaveLength(2);
  });

  it('keys entries by sha256 and maps the principal', async () => {
    const { cache } = setup({ svc_x: principal({ authKind: 'api_key', apiKeyId: 'k1', role: 'Wizard' }) });
    const e = await cache.authenticate('svc_x', ctx);
    expect(e.hash).toBe(tokenHash('svc_x'));
    expect(e.hash).not.toContain('svc_x');
    expect(e.principal).toEqual({ userId: 'u1', role: 'Viewer', authKind: 'api_key', apiKeyId: 'k1', email: 'a@example.com' });
  });

  it('shares one in-flight call between concurrent requests', async () => {
    const { cache, calls } = setup({ t: principal() });
    await Promise.all([cache.authenticate('t', ctx), cache.authenticate('t', ctx), cache.authenticate('t', ctx)]);
    expect(calls).toEqual(['t']);
  });

  it('bad tokens are unauthenticated and not cached; auth down stays unavailable', async () => {
    const { cache, calls, setDown } = setup({});
    await expect(cache.authenticate('x', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(cache.authenticate('x', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(calls).toHaveLength(2);
    setDown(true);
    await expect(cache.authenticate('y', ctx)).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('drops a key, a user, and ignores an answer that raced a revocation', async () => {
    const table = { a: principal({ authKind: 'api_key', apiKeyId: 'k1' }), b: principal(), c: principal({ userId: 'u2' }) };
    const { cache, calls } = setup(table);
    const bus = createGatewayBus(createLogger('t', 'silent'));
    cache.subscribeTo(authChangesOf(bus));
    await Promise.all(['a', 'b', 'c'].map((t) => cache.authenticate(t, ctx)));
    expect(cache.size).toBe(3);
    bus.emit('revocation', { api_key_id: 'k1' });
    expect(cache.size).toBe(2);
    bus.emit('event', {
      row: { id: 1, entity_type: 'User', entity_id: 'u1', project_id: null, action: 'update', actor: null, changes: {}, created_at: '' },
      text: '',
    });
    expect(cache.size).toBe(1);
    bus.emit('event', {
      row: { id: 2, entity_type: 'Shot', entity_id: 'u2', project_id: null, action: 'update', actor: null, changes: {}, created_at: '' },
      text: '',
    });
    expect(cache.size).toBe(1);

    const racing = cache.authenticate('b', ctx);
    bus.emit('revocation', { user_id: 'u1' });
    await racing;
    expect(cache.size).toBe(1); // the answer was used once but not cached
    calls.length = 0;
    await cache.authenticate('b', ctx);
    expect(calls).toEqual(['b']);
  });

  it('remembers refused tokens for a while (bounded, oldest first) and forgets them on any User change', async () => {
    let clock = 1_000_000;
    const calls: string[] = [];
    const table: Record<string, AuthAnswerPrincipal> = {};
    const cache = new AuthCache(
      async (token) => {
        calls.push(token);
        const p = table[token];
        if (!p) throw new AppError('unauthenticated', 'bad token');
        return { principal: p, expiresAtUnix: 0 };
      },
      5,
      () => clock,
      { seconds: 10, max: 2 },
    );
    await expect(cache.authenticate('x', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(cache.authenticate('x', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(calls).toEqual(['x']);
    clock += 10_001;
    await expect(cache.authenticate('x', ctx)).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(calls).toEqual(['x', 'x']);
    // Bounded: a third refused token pushes out the oldest.
    await expect(cache.authenticate('y', ctx)).rejects.toThrow();
    await expect(cache.authenticate('z', ctx)).rejects.toThrow();
    await expect(cache.authenticate('x', ctx)).rejects.toThrow();
    expect(calls).toEqual(['x', 'x', 'y', 'z', 'x']);
    // A user enabled again: every refusal is forgotten.
    table.z = principal();
    cache.dropUser('u1');
    expect((await cache.authenticate('z', ctx)).principal.userId).toBe('u1');
  });

  it("never caches past a login token's expiry, carries it, and keys rate limits by user or API key", async () => {
    let clock = 1_000_000;
    const cache = new AuthCache(
      async (token) =>
        token === 'key'
          ? { principal: principal({ authKind: 'api_key', apiKeyId: 'k9' }), expiresAtUnix: 0 }
          : { principal: principal(), expiresAtUnix: Math.floor(clock / 1000) + 2 },
      60,
      () => clock,
    );
    const t = await cache.authenticate('tok', ctx);
    expect(t.tokenExpiresAt).toBe((Math.floor(1_000_000 / 1000) + 2) * 1000);
    expect(t.expiresAt).toBe(t.tokenExpiresAt);
    // An entry that ends with the token is not renewed beside its answers (auth would answer the same end).
    expect(t.renewAt).toBeUndefined();
    expect(t.rateKey).toBe('user:u1');
    const k = await cache.authenticate('key', ctx);
    expect(k.tokenExpiresAt).toBeUndefined();
    expect(k.rateKey).toBe('key:k9');
    expect(cache.hasValid('tok')).toBe(true);
    clock += 2_001;
    expect(cache.hasValid('tok')).toBe(false);
    expect(cache.hasValid('key')).toBe(true);
  });
});
