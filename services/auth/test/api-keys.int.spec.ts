/**
 * The number of live API keys a user holds is bounded (docs/api-notes.md, "API keys"): keys
 * issued at once through two replicas never pass the limit, a revoked or expired key frees its
 * place, and another user is not held back. An agent key's scope and pools are stored, listed and
 * answered by Authenticate, on every replica. Real PostgreSQL and NATS; records is a stand-in.
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, deleteStreams, uniquePrefix, type TestDatabase } from '@reelbase/lib-testkit';
import type { authv1 } from '@reelbase/proto';
import { parseAuthConfig } from '../src/config.js';
import { startFakeRecords, type FakeRecords } from './fake-records.js';
import { anon, asPrincipal as as, authTestEnv, failure, startAuthReplica, type AuthReplica } from './helpers.js';

const LIMIT = 5;

type Replica = AuthReplica;

let db: TestDatabase;
let prefix: string;
let fake: FakeRecords;
let sql: MikroORM;
const replicas: Replica[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('authkeys');
  fake = await startFakeRecords();
  const config = parseAuthConfig({ ...authTestEnv(db.url, prefix, fake.port), API_KEYS_PER_USER: String(LIMIT) });
  sql = await MikroORM.init({ clientUrl: db.url, entities: [], discovery: { warnWhenNoEntities: false } });
  for (let i = 0; i < 2; i++) replicas.push(await startAuthReplica(config));
});

afterAll(async () => {
  for (const r of replicas) {
    r.client.close();
    await r.auth.stop();
  }
  await fake?.stop();
  await sql?.close();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('API keys per user', () => {
  it('issues at most the limit however many are asked for at once on two replicas; a revoked or expired key frees a place', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const reg = await a.client.call.register({ email: 'boss@studio.io', password: 'first-user-pw', name: 'Boss' }, anon);
    const admin = (await a.client.call.authenticate({ token: reg.accessToken! }, anon)).principal!;
    await a.client.call.register({ email: 'art@studio.io', password: 'artist-pw-1', name: 'Art', role: 'Artist' }, as(admin));
    const artist = (
      await a.client.call.authenticate({ token: (await a.client.call.login({ email: 'art@studio.io', password: 'artist-pw-1' }, anon)).accessToken }, anon)
    ).principal!;

    const asked = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).client.call.issueApiKey({ name: `k${i}` }, as(artist))));
    const issued = asked.filter((r) => r.status === 'fulfilled');
    expect(issued).toHaveLength(LIMIT);
    for (const r of asked.filter((x) => x.status === 'rejected')) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ kind: 'conflict', code: 'limit_reached' });
    }
    const live = await sql.em.getConnection().execute<{ n: string }[]>(`select count(*) as n from auth.api_key where user_id = ?`, [artist.userId]);
    expect(Number(live[0]!.n)).toBe(LIMIT);

    // Another user has places of their own.
    expect((await a.client.call.issueApiKey({ name: 'admin-own' }, as(admin))).key).toBeDefined();
    // A revoked key frees its place, and so does one that expired.
    const first = (issued[0] as PromiseFulfilledResult<authv1.IssueApiKeyResponse>).value.key!;
    await a.client.call.revokeApiKey({ id: first.id }, as(artist));
    const again = await b.client.call.issueApiKey({ name: 'again' }, as(artist));
    expect((await failure(a.client.call.issueApiKey({ name: 'one-too-many' }, as(artist)))).code).toBe('limit_reached');
    await sql.em.getConnection().execute(`update auth.api_key set expires_at = now() - interval '1 second' where id = ?`, [again.key!.id]);
    expect((await a.client.call.issueApiKey({ name: 'after-expiry' }, as(artist))).key).toBeDefined();
  });
});

describe('agent keys', () => {
  it('stores scope and pools, lists them, and answers them in the principal of every replica; a normal key has none', async () => {
    const [a, b] = replicas as [Replica, Replica];
    await a.client.call.register({ email: 'render@studio.io', password: 'render-pw-1', name: 'Render', role: 'Artist' }, as(await adminOf(a)));
    const token = (await a.client.call.login({ email: 'render@studio.io', password: 'render-pw-1' }, anon)).accessToken;
    const render = (await a.client.call.authenticate({ token }, anon)).principal!;
    expect(render.access).toBeUndefined();

    const gpu = await a.client.call.issueApiKey({ name: 'render-07', access: { scope: 'agent', pools: ['gpu', 'gpu-large'] } }, as(render));
    expect(gpu.key).toMatchObject({ name: 'render-07', access: { scope: 'agent', pools: ['gpu', 'gpu-large'] } });
    const any = await a.client.call.issueApiKey({ name: 'sync-01', access: { scope: 'agent', pools: [] } }, as(render));
    const plain = await a.client.call.issueApiKey({ name: 'ci' }, as(render));
    expect(plain.key!.access).toBeUndefined();

    const rows = await sql.em
      .getConnection()
      .execute<{ name: string; scope: string | null; pools: string[] | null }[]>(
        `select name, scope, pools from auth.api_key where user_id = ? order by created_at, id`,
        [render.userId],
      );
    expect(rows).toEqual([
      { name: 'render-07', scope: 'agent', pools: ['gpu', 'gpu-large'] },
      { name: 'sync-01', scope: 'agent', pools: null },
      { name: 'ci', scope: null, pools: null },
    ]);
    const listed = (await b.client.call.listApiKeys({}, as(render))).items;
    expect(listed.map((k) => [k.name, k.access])).toEqual([
      ['render-07', { scope: 'agent', pools: ['gpu', 'gpu-large'] }],
      ['sync-01', { scope: 'agent', pools: [] }],
      ['ci', undefined],
    ]);
    for (const replica of [a, b]) {
      const p = (await replica.client.call.authenticate({ token: gpu.token }, anon)).principal!;
      expect(p).toMatchObject({ userId: render.userId, role: 'Artist', authKind: 'api_key', access: { scope: 'agent', pools: ['gpu', 'gpu-large'] } });
      expect((await replica.client.call.authenticate({ token: any.token }, anon)).principal!.access).toEqual({ scope: 'agent', pools: [] });
      expect((await replica.client.call.authenticate({ token: plain.token }, anon)).principal!.access).toBeUndefined();
    }
    // Every problem at once, nothing stored; the table refuses pools without the scope too.
    const bad = await failure(a.client.call.issueApiKey({ name: 'bad', access: { scope: 'root', pools: ['', 'x'.repeat(65)] } }, as(render)));
    expect(bad.problems?.map((p) => p.loc.join('.'))).toEqual(['scope', 'pools', 'pools.0', 'pools.1']);
    await expect(sql.em.getConnection().execute(`update auth.api_key set scope = null where id = ?`, [gpu.key!.id])).rejects.toThrow(/api_key_scope_check/);
  });
});

/** The Admin registered first (by the spec above), as a principal. */
async function adminOf(replica: Replica): Promise<authv1.Principal> {
  const token = (await replica.client.call.login({ email: 'boss@studio.io', password: 'first-user-pw' }, anon)).accessToken;
  return (await replica.client.call.authenticate({ token }, anon)).principal!;
}
