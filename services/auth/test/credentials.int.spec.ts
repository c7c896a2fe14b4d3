/**
 * Credentials that end (docs/api-notes.md, Authentication): signing keys sealed at rest and
 * retired after a rotation, expiring API keys, an Admin's view of other users' keys, and
 * "revoke every session and key of a user". Real PostgreSQL and NATS; records is a stand-in.
 */
import { randomBytes } from 'node:crypto';
import { generateKeyPair, exportJWK, decodeProtectedHeader } from 'jose';
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectNats, createLogger, natsNames, newId, SecretCipher, type NatsConnection } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import type { authv1 } from '@reelbase/proto';
import { parseAuthConfig, type AuthConfig } from '../src/config.js';
import { startAuth } from '../src/service.js';
import { startFakeRecords, type FakeRecords } from './fake-records.js';
import { anon, asPrincipal, authTestEnv, failure, startAuthReplica, type AuthReplica } from './helpers.js';

const logger = createLogger('auth-test', 'silent');
const as = asPrincipal;

type Replica = AuthReplica;

let db: TestDatabase;
let prefix: string;
let fake: FakeRecords;
let config: AuthConfig;
let sql: MikroORM;
let nc: NatsConnection;
let a: Replica;
let b: Replica;
let legacyKid: string;

const configEnv = () => authTestEnv(db.url, prefix, fake.port);

const startReplica = (): Promise<Replica> => startAuthReplica(config);
const query = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => sql.em.getConnection().execute<T[]>(text, params);
const rejects = async (r: Replica, token: string) => expect((await failure(r.client.call.authenticate({ token }, anon))).kind).toBe('unauthenticated');
const resolves = async (r: Replica, token: string) => (await r.client.call.authenticate({ token }, anon)).principal!;

/** Collects what is published on the revocations subject from now on. */
function listen() {
  const got: unknown[] = [];
  const sub = nc.subscribe(natsNames(prefix).authRevocations, { callback: (_err, m) => void got.push(m.json()) });
  return { got, stop: () => sub.unsubscribe(), ready: nc.flush() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('authcred');
  fake = await startFakeRecords();
  config = parseAuthConfig(configEnv());
  sql = await MikroORM.init({ clientUrl: db.url, entities: [], discovery: { warnWhenNoEntities: false } });
  nc = await connectNats(config.NATS_URL, 'auth-test', logger);
  // A database as an earlier version left it: schema `auth` at migration 3, one key stored in clear.
  a = await startReplica();
  await a.client.close();
  await a.auth.stop();
  await query(`delete from auth.signing_key`);
  await query(`alter table auth.signing_key drop column private_key_sealed`);
  await query(`alter table auth.signing_key alter column private_jwk set not null`);
  await query(`delete from auth.mikro_orm_migrations where name = 'auth-0004-credential-lifetimes'`);
  await query(`alter table auth.api_key drop column expires_at`);
  await query(`drop table auth.session_revocation`);
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  legacyKid = newId();
  const [priv, pub] = await Promise.all([exportJWK(privateKey), exportJWK(publicKey)]);
  await query(`insert into auth.signing_key (kid, private_jwk, public_jwk, created_at) values (?, ?::jsonb, ?::jsonb, now())`, [
    legacyKid,
    JSON.stringify({ ...priv, kid: legacyKid, alg: 'ES256' }),
    JSON.stringify({ ...pub, kid: legacyKid, alg: 'ES256' }),
  ]);
  a = await startReplica();
  b = await startReplica();
});

afterAll(async () => {
  await nc?.close();
  for (const r of [a, b]) {
    r?.client.close();
    await r?.auth.stop();
  }
  await fake?.stop();
  await sql?.close();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('credentials that end', () => {
  let admin: authv1.Principal;
  let adminToken: string;
  let artist: authv1.Principal;
  const artistLogin = { email: 'art@studio.io', password: 'artist-pw-1' };

  it('seals a private key stored in clear at the first start, and keeps signing with it', async () => {
    const rows = await query<{ kid: string; private_jwk: unknown; private_key_sealed: string }>(
      'select kid, private_jwk, private_key_sealed from auth.signing_key',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.kid).toBe(legacyKid);
    expect(rows[0]!.private_jwk).toBeNull();
    expect(rows[0]!.private_key_sealed).toMatch(/^enc:v1:[0-9a-f]{16}:/);
    // It opens with the key, for this row only, and holds the whole private JWK.
    const jwk = JSON.parse(new SecretCipher(TEST_SECRETS_KEY).open(rows[0]!.private_key_sealed, `auth.signing_key:${legacyKid}`)) as Record<string, unknown>;
    expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', d: expect.any(String) });
    expect(rows[0]!.private_key_sealed).not.toContain(jwk.d as string);

    const reg = await a.client.call.register({ email: 'boss@studio.io', password: 'first-user-pw', name: 'Boss' }, anon);
    adminToken = reg.accessToken!;
    expect(decodeProtectedHeader(adminToken).kid).toBe(legacyKid);
    admin = await resolves(b, adminToken);
    await a.client.call.register({ email: artistLogin.email, password: artistLogin.password, name: 'Art', role: 'Artist' }, as(admin));
    artist = await resolves(a, (await a.client.call.login(artistLogin, anon)).accessToken);
  });

  it('schedules the retirement of a rotated-out key, and refuses its tokens on every replica once due', async () => {
    expect((await failure(a.client.call.rotateSigningKey({ retirePrevious: false }, as(artist)))).kind).toBe('forbidden');
    const l = listen();
    await l.ready;
    const { kid, retired } = await a.client.call.rotateSigningKey({ retirePrevious: false }, as(admin));
    expect(retired).toBe(1);
    // Due when the longest token the old key signed has expired: the rotation + JWT_TTL_SECONDS.
    const [old] = await query<{ due_in: number }>(`select extract(epoch from retired_at - now())::float8 as due_in from auth.signing_key where kid = ?`, [
      legacyKid,
    ]);
    expect(old!.due_in).toBeGreaterThan(config.JWT_TTL_SECONDS - 30);
    expect(old!.due_in).toBeLessThanOrEqual(config.JWT_TTL_SECONDS);
    await vi.waitFor(() => expect(l.got).toContainEqual({ signing_keys: 'rotated' }));
    // The other replica switches to the new key when told.
    await vi.waitFor(async () => {
      const t = (await b.client.call.login({ email: 'boss@studio.io', password: 'first-user-pw' }, anon)).accessToken;
      expect(decodeProtectedHeader(t).kid).toBe(kid);
    });
    for (const r of [a, b]) await resolves(r, adminToken);
    // Until then its tokens live as long as their own `exp`.
    const exp = (await a.client.call.authenticate({ token: adminToken }, anon)).expiresAtUnix;
    // Time passes (here: the deadline is moved), and the replicas read the keys again.
    await query(`update auth.signing_key set retired_at = now() + interval '2 seconds' where kid = ?`, [legacyKid]);
    nc.publish(natsNames(prefix).authRevocations, JSON.stringify({ signing_keys: 'rotated' }));
    // The answer now ends with the key, so no gateway caches the token past it.
    await vi.waitFor(async () => {
      for (const r of [a, b]) {
        const until = (await r.client.call.authenticate({ token: adminToken }, anon)).expiresAtUnix;
        expect(until).toBeLessThan(exp);
        expect(until).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 2);
      }
    });
    await vi.waitFor(
      async () => {
        for (const r of [a, b]) await rejects(r, adminToken);
      },
      { timeout: 5000, interval: 100 },
    );
    l.stop();
  });

  it('an emergency rotation logs everybody out at once on every replica, and leaves API keys working', async () => {
    const key = await a.client.call.issueApiKey({ name: 'farm' }, as(admin));
    const before = (await b.client.call.login({ email: 'boss@studio.io', password: 'first-user-pw' }, anon)).accessToken;
    for (const r of [a, b]) await resolves(r, before);
    const l = listen();
    await l.ready;
    const { kid, retired } = await b.client.call.rotateSigningKey({ retirePrevious: true }, as(admin));
    expect(retired).toBe(1);
    await rejects(b, before);
    await vi.waitFor(() => expect(l.got).toEqual([{ signing_keys: 'retired' }]));
    await vi.waitFor(() => rejects(a, before));
    expect((await resolves(a, key.token)).authKind).toBe('api_key');
    const after = (await a.client.call.login({ email: 'boss@studio.io', password: 'first-user-pw' }, anon)).accessToken;
    expect(decodeProtectedHeader(after).kid).toBe(kid);
    adminToken = after;
    admin = await resolves(b, after);
    const usable = await query<{ kid: string }>('select kid from auth.signing_key where retired_at is null or retired_at > now()');
    expect(usable).toEqual([{ kid }]);
    l.stop();
  });

  it('holds no private key in clear, and erases those of retired keys at the next start', async () => {
    const rows = await query<Record<string, unknown>>('select * from auth.signing_key');
    expect(rows.length).toBe(3);
    for (const r of rows) {
      expect(r.private_jwk).toBeNull();
      expect(r.private_key_sealed).toMatch(/^enc:v1:/);
    }
    expect(JSON.stringify(rows)).not.toMatch(/"d"|BEGIN|PRIVATE/);
    a.client.close();
    await a.auth.stop();
    a = await startReplica();
    const after = await query<{ kid: string; usable: boolean; sealed: string | null; jwk: unknown }>(
      `select kid, (retired_at is null or retired_at > now()) as usable, private_key_sealed as sealed, private_jwk as jwk from auth.signing_key`,
    );
    expect(after.filter((r) => !r.usable).map((r) => [r.sealed, r.jwk])).toEqual([
      [null, null],
      [null, null],
    ]);
    expect(after.filter((r) => r.usable).map((r) => r.sealed)).toEqual([expect.stringMatching(/^enc:v1:/)]);
    await resolves(a, adminToken);
  });

  it('refuses to start with a SECRETS_KEY that cannot open the stored keys, saying what to do', async () => {
    const wrong = parseAuthConfig({ ...configEnv(), SECRETS_KEY: randomBytes(32).toString('base64') });
    await expect(startAuth(wrong, logger)).rejects.toThrow(/signing key .* cannot be decrypted .*neither SECRETS_KEY.*DATA_DIR\/secrets\.key/);
    // With the right key in SECRETS_KEY_PREVIOUS it starts, and seals them with the new key.
    const next = randomBytes(32).toString('base64');
    const rotated = await startAuth(parseAuthConfig({ ...configEnv(), SECRETS_KEY: next, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY }), logger);
    await rotated.stop();
    const [row] = await query<{ kid: string; sealed: string }>(
      'select kid, private_key_sealed as sealed from auth.signing_key where retired_at is null or retired_at > now()',
    );
    expect(new SecretCipher(next).open(row!.sealed, `auth.signing_key:${row!.kid}`)).toContain('"d"');
    // Back to the key the replicas run with.
    await startAuth(parseAuthConfig({ ...configEnv(), SECRETS_KEY: TEST_SECRETS_KEY, SECRETS_KEY_PREVIOUS: next }), logger).then((r) => r.stop());
  });

  it('issues keys that expire: refused after expires_at, listed with it; a past expiry is 422', async () => {
    const past = await failure(a.client.call.issueApiKey({ name: 'old', expiresAt: new Date(Date.now() - 1000).toISOString() }, as(artist)));
    expect([past.kind, past.problems?.[0]?.loc]).toEqual(['invalid', ['expires_at']]);
    const bad = await failure(a.client.call.issueApiKey({ name: 'bad', expiresAt: 'tomorrow' }, as(artist)));
    expect([bad.kind, bad.problems?.[0]?.loc]).toEqual(['invalid', ['expires_at']]);
    const expiresAt = new Date(Date.now() + 2500);
    const res = await a.client.call.issueApiKey({ name: 'short', expiresAt: expiresAt.toISOString() }, as(artist));
    expect(res.key!.expiresAt).toBe(expiresAt.toISOString());
    const answer = await a.client.call.authenticate({ token: res.token }, anon);
    expect(answer.principal!.userId).toBe(artist.userId);
    // Gateways cache it no longer than that.
    expect(answer.expiresAtUnix).toBe(Math.floor(expiresAt.getTime() / 1000));
    const listed = await a.client.call.listApiKeys({}, as(artist));
    expect(listed.items.find((k) => k.id === res.key!.id)).toMatchObject({ expiresAt: expiresAt.toISOString(), userId: artist.userId });
    await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
    await rejects(a, res.token);
  });

  it("lets an Admin list and revoke another user's keys; others get 403 for the list and 404 for the key", async () => {
    const key = (await a.client.call.issueApiKey({ name: 'render' }, as(artist))).key!;
    const listed = await a.client.call.listApiKeys({ userId: artist.userId }, as(admin));
    expect(listed.items.map((k) => k.id)).toContain(key.id);
    expect(listed.items.every((k) => k.userId === artist.userId)).toBe(true);
    expect((await failure(a.client.call.listApiKeys({ userId: admin.userId }, as(artist)))).kind).toBe('forbidden');
    // Naming oneself is allowed.
    expect((await a.client.call.listApiKeys({ userId: artist.userId }, as(artist))).items.map((k) => k.id)).toContain(key.id);
    const adminKey = (await a.client.call.issueApiKey({ name: 'admin-own' }, as(admin))).key!;
    expect((await failure(a.client.call.revokeApiKey({ id: adminKey.id }, as(artist)))).kind).toBe('not_found');
    await a.client.call.revokeApiKey({ id: key.id }, as(admin));
    expect((await a.client.call.listApiKeys({ userId: artist.userId }, as(admin))).items.map((k) => k.id)).not.toContain(key.id);
  });

  it('revokes every session and key of a user (Admin): tokens and keys refused, announced on NATS', async () => {
    const token = (await a.client.call.login(artistLogin, anon)).accessToken;
    const k1 = await a.client.call.issueApiKey({ name: 'one' }, as(artist));
    const k2 = await a.client.call.issueApiKey({ name: 'two' }, as(artist));
    await resolves(b, token);
    expect((await failure(a.client.call.revokeUserSessions({ userId: artist.userId }, as(artist)))).kind).toBe('forbidden');
    expect((await failure(a.client.call.revokeUserSessions({ userId: newId() }, as(admin)))).kind).toBe('not_found');
    const l = listen();
    await l.ready;
    const res = await a.client.call.revokeUserSessions({ userId: artist.userId }, as(admin));
    // The two new keys and the one that expired earlier (expired keys are revoked too).
    expect(res.apiKeysRevoked).toBe(3);
    expect(Date.parse(res.tokensRevokedBefore)).toBeGreaterThan(Date.now() - 5000);
    for (const r of [a, b]) for (const t of [token, k1.token, k2.token]) await rejects(r, t);
    await vi.waitFor(() => expect(l.got).toEqual([{ user_id: artist.userId }]));
    expect((await a.client.call.listApiKeys({ userId: artist.userId }, as(admin))).items).toEqual([]);
    // The Admin's own sessions are untouched, and the user may log in again (from the next second on).
    await resolves(a, adminToken);
    await new Promise((r) => setTimeout(r, 1100));
    const again = (await a.client.call.login(artistLogin, anon)).accessToken;
    expect((await resolves(b, again)).userId).toBe(artist.userId);
    l.stop();
  });
});
