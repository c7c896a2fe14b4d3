/**
 * auth against the real PostgreSQL and NATS, over its real gRPC surface. Only the records
 * peer is a stand-in (fake-records.ts).
 */
import { createHash } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError, connectNats, createGrpcClient, createLogger, natsNames, type GrpcClient, type NatsConnection } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { authv1, recordsv1 } from '@reelbase/proto';
import { parseAuthConfig, type AuthConfig } from '../src/config.js';
import { startAuth, type RunningAuth } from '../src/service.js';
import { startFakeRecords, type FakeRecords } from './fake-records.js';
import { anon, asPrincipal, authTestEnv, failure } from './helpers.js';

const logger = createLogger('auth-test', 'silent');
const as = asPrincipal;

let db: TestDatabase;
let prefix: string;
let fake: FakeRecords;
let config: AuthConfig;
let auth: RunningAuth;
let client: GrpcClient<authv1.AuthServiceClient>;
let sql: MikroORM;
let nc: NatsConnection;

async function start() {
  auth = await startAuth(config, logger);
  client = createGrpcClient(authv1.AuthServiceClient, authv1.AuthServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'auth',
    address: `127.0.0.1:${auth.grpcPort}`,
  });
}
async function stop() {
  client?.close();
  await auth?.stop();
}
const query = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => sql.em.getConnection().execute<T[]>(text, params);

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('auth');
  fake = await startFakeRecords();
  config = parseAuthConfig(authTestEnv(db.url, prefix, fake.port));
  await start();
  sql = await MikroORM.init({ clientUrl: db.url, entities: [], discovery: { warnWhenNoEntities: false } });
  nc = await connectNats(config.NATS_URL, 'auth-test', logger);
});

afterAll(async () => {
  await nc?.close();
  await stop();
  await fake?.stop();
  await sql?.close();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('auth service', () => {
  let admin: authv1.Principal;
  let adminToken: string;
  let supervisor: authv1.Principal;
  let supervisorToken: string;
  let apiKey: { id: string; token: string };
  const adminEmail = 'boss@studio.io';
  const supEmail = 'sup@studio.io';

  it('makes the first registration an Admin with a token that Authenticate resolves', async () => {
    const res = await client.call.register({ email: 'Boss@Studio.io', password: 'first-user-pw', name: 'Boss' }, anon);
    expect(res.accessToken).toBeTruthy();
    expect(res.expiresIn).toBe(43_200);
    const record = recordsv1.Record.fromJSON(JSON.parse(res.userJson));
    expect(record.entityType).toBe('User');
    expect(JSON.parse(record.dataJson)).toEqual({ name: 'Boss', email: adminEmail, role: 'Admin', login_enabled: true });
    // The explicit id was sent by a service principal, so records honoured it.
    expect(fake.createCalls[0]!.ctx.principal?.authKind).toBe('service');
    expect(fake.createCalls[0]!.request.id).toBe(record.id);

    const { principal } = await client.call.authenticate({ token: res.accessToken! }, anon);
    expect(principal).toEqual({ userId: record.id, role: 'Admin', authKind: 'token', email: adminEmail, cacheSeconds: 5 });
    admin = principal!;
    adminToken = res.accessToken!;
  });

  it('lets only an Admin register further users, with the given role and no token', async () => {
    const body = { email: supEmail, password: 'supervisor-pw', name: 'Sup', role: 'Supervisor' };
    expect((await failure(client.call.register(body, anon))).kind).toBe('forbidden');
    const asViewer = { requestId: 't', principal: { userId: admin.userId, role: 'Viewer' as const, authKind: 'token' as const } };
    expect((await failure(client.call.register(body, asViewer))).kind).toBe('forbidden');

    const res = await client.call.register(body, as(admin));
    expect(res.accessToken).toBeUndefined();
    expect(res.expiresIn).toBeUndefined();
    const record = recordsv1.Record.fromJSON(JSON.parse(res.userJson));
    expect(JSON.parse(record.dataJson)).toMatchObject({ role: 'Supervisor', email: supEmail, login_enabled: true });
    expect(record.createdBy).toBe(admin.userId);

    const artist = await client.call.register({ email: 'art@studio.io', password: 'artist-pw-1', name: 'Art' }, as(admin));
    expect(JSON.parse(recordsv1.Record.fromJSON(JSON.parse(artist.userJson)).dataJson).role).toBe('Artist');
  });

  it('refuses duplicates, short passwords and bad emails', async () => {
    const dup = await failure(client.call.register({ email: 'SUP@studio.io', password: 'whatever-pw', name: 'X' }, as(admin)));
    expect([dup.kind, dup.code]).toEqual(['conflict', 'duplicate_code']);
    const bad = await failure(client.call.register({ email: 'not-an-email', password: 'short', name: 'X' }, as(admin)));
    expect(bad.kind).toBe('invalid');
    expect(bad.problems).toEqual([expect.objectContaining({ loc: ['email'] }), expect.objectContaining({ loc: ['password'], type: 'string_too_short' })]);
  });

  it('keeps no credential when records fails to create the User', async () => {
    fake.failNextCreate = true;
    const err = await failure(client.call.register({ email: 'ghost@studio.io', password: 'ghost-pw-1', name: 'G' }, as(admin)));
    expect(err.kind).toBe('unavailable');
    expect(await query('select 1 from auth.credential where email = ?', ['ghost@studio.io'])).toHaveLength(0);
    await client.call.register({ email: 'ghost@studio.io', password: 'ghost-pw-1', name: 'G' }, as(admin));
  });

  it('logs in, and answers unknown email and wrong password alike', async () => {
    const res = await client.call.login({ email: 'Sup@Studio.IO', password: 'supervisor-pw' }, anon);
    expect(res.expiresIn).toBe(43_200);
    supervisor = (await client.call.authenticate({ token: res.accessToken }, anon)).principal!;
    expect(supervisor).toMatchObject({ role: 'Supervisor', authKind: 'token', email: supEmail });
    supervisorToken = res.accessToken;

    const wrong = await failure(client.call.login({ email: supEmail, password: 'supervisor-pX' }, anon));
    const unknown = await failure(client.call.login({ email: 'nobody@studio.io', password: 'supervisor-pw' }, anon));
    expect(wrong.kind).toBe('unauthenticated');
    expect([unknown.kind, unknown.code, unknown.message]).toEqual([wrong.kind, wrong.code, wrong.message]);
    expect(wrong.message).toBe('invalid email or password');
  });

  it('throttles an email after 10 failed logins within a minute', async () => {
    const email = 'art@studio.io';
    for (let i = 0; i < 10; i++) {
      expect((await failure(client.call.login({ email, password: `wrong-${i}-pw` }, anon))).kind).toBe('unauthenticated');
    }
    const limited = await failure(client.call.login({ email, password: 'artist-pw-1' }, anon));
    expect(limited.kind).toBe('rate_limited');
    expect(limited.retryAfter).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfter).toBeLessThanOrEqual(60);
    // The count is kept in PostgreSQL (shared by replicas), per email.
    expect(await query('select 1 from auth.login_failure where email = ?', [email])).toHaveLength(10);
    await client.call.login({ email: supEmail, password: 'supervisor-pw' }, anon);
  });

  it('counts only failed logins: 20 parallel correct ones all succeed, 30 parallel wrong ones check at most 10', async () => {
    const email = 'ghost@studio.io';
    const right = await Promise.allSettled(Array.from({ length: 20 }, () => client.call.login({ email, password: 'ghost-pw-1' }, anon)));
    expect(right.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
    expect(await query('select 1 from auth.login_failure where email = ?', [email])).toHaveLength(0);

    const wrong = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => client.call.login({ email, password: `guess-${i}-pw` }, anon)));
    const kinds = wrong.map((r) => (r.status === 'rejected' ? (r.reason as AppError).kind : 'ok'));
    // The per-email limit holds under a parallel burst: only 10 passwords were checked.
    expect(kinds.filter((k) => k === 'unauthenticated')).toHaveLength(10);
    expect(kinds.filter((k) => k === 'rate_limited')).toHaveLength(20);
    expect(await query('select 1 from auth.login_failure where email = ? and not pending', [email])).toHaveLength(10);
    // Even the right password now waits for the window.
    expect((await failure(client.call.login({ email, password: 'ghost-pw-1' }, anon))).kind).toBe('rate_limited');
  });

  it('issues API keys that Authenticate resolves to their user, and lists prefixes only', async () => {
    expect((await failure(client.call.issueApiKey({ name: 'x' }, anon))).kind).toBe('unauthenticated');
    const res = await client.call.issueApiKey({ name: 'farm submitter' }, as(supervisor));
    expect(res.token).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    expect(res.key).toMatchObject({ name: 'farm submitter', prefix: res.token.slice(0, 12) });
    apiKey = { id: res.key!.id, token: res.token };

    const { principal } = await client.call.authenticate({ token: res.token }, anon);
    expect(principal).toEqual({ ...supervisor, authKind: 'api_key', apiKeyId: apiKey.id });

    const list = await client.call.listApiKeys({}, as(supervisor));
    expect(list.items.map((k) => k.id)).toEqual([apiKey.id]);
    // The use is recorded without delaying Authenticate's answer.
    await vi.waitFor(async () => expect((await client.call.listApiKeys({}, as(supervisor))).items[0]!.lastUsedAt).toBeTruthy());
    expect(JSON.stringify(list)).not.toContain(res.token);
    expect((await client.call.listApiKeys({}, as(admin))).items).toEqual([]);
  });

  it('revokes a key: Authenticate fails and the revocation is announced on NATS', async () => {
    const other = (await client.call.issueApiKey({ name: 'other' }, as(supervisor))).key!;
    const artist = { requestId: 't', principal: { userId: 'someone-else', role: 'Artist' as const, authKind: 'token' as const } };
    expect((await failure(client.call.revokeApiKey({ id: apiKey.id }, artist))).kind).toBe('not_found');
    expect((await failure(client.call.revokeApiKey({ id: 'not-a-uuid' }, as(supervisor)))).kind).toBe('not_found');

    const sub = nc.subscribe(natsNames(prefix).authRevocations, { max: 2 });
    const messages = (async () => {
      const got: unknown[] = [];
      for await (const m of sub) got.push(m.json());
      return got;
    })();
    await nc.flush();
    await client.call.revokeApiKey({ id: apiKey.id }, as(supervisor));
    const err = await failure(client.call.authenticate({ token: apiKey.token }, anon));
    expect(err.kind).toBe('unauthenticated');
    // An Admin may revoke anyone's key.
    await client.call.revokeApiKey({ id: other.id }, as(admin));
    const timeout = setTimeout(() => sub.unsubscribe(), 3000);
    expect(await messages).toEqual([
      { api_key_id: apiKey.id, user_id: supervisor.userId },
      { api_key_id: other.id, user_id: supervisor.userId },
    ]);
    clearTimeout(timeout);
    expect((await client.call.listApiKeys({}, as(supervisor))).items).toEqual([]);
    expect((await failure(client.call.revokeApiKey({ id: apiKey.id }, as(supervisor)))).kind).toBe('not_found');
  });

  it('rejects a retired or login-disabled user even with a valid token or key', async () => {
    const key = await client.call.issueApiKey({ name: 'k' }, as(supervisor));
    fake.retire(supervisor.userId);
    for (const token of [supervisorToken, key.token]) {
      expect((await failure(client.call.authenticate({ token }, anon))).kind).toBe('unauthenticated');
    }
    expect((await failure(client.call.login({ email: supEmail, password: 'supervisor-pw' }, anon))).kind).toBe('unauthenticated');
    fake.revive(supervisor.userId);
    await client.call.authenticate({ token: supervisorToken }, anon);

    fake.setData(supervisor.userId, { login_enabled: false });
    for (const token of [supervisorToken, key.token]) {
      expect((await failure(client.call.authenticate({ token }, anon))).kind).toBe('unauthenticated');
    }
    const login = await failure(client.call.login({ email: supEmail, password: 'supervisor-pw' }, anon));
    expect([login.kind, login.message]).toEqual(['unauthenticated', 'invalid email or password']);
    fake.setData(supervisor.userId, { login_enabled: true });
    await client.call.authenticate({ token: key.token }, anon);
  });

  it('rotates signing keys: old tokens stay valid, new ones carry the new kid', async () => {
    expect((await failure(client.call.rotateSigningKey({}, as(supervisor)))).kind).toBe('forbidden');
    const oldKid = decodeProtectedHeader(adminToken).kid;
    const { kid } = await client.call.rotateSigningKey({}, as(admin));
    expect(kid).not.toBe(oldKid);
    const fresh = await client.call.login({ email: adminEmail, password: 'first-user-pw' }, anon);
    expect(decodeProtectedHeader(fresh.accessToken).kid).toBe(kid);
    for (const token of [adminToken, fresh.accessToken]) {
      expect((await client.call.authenticate({ token }, anon)).principal!.userId).toBe(admin.userId);
    }
  });

  it('stores only hashes of passwords and API keys', async () => {
    const creds = await query<{ email: string; password_hash: string }>('select email, password_hash from auth.credential order by email');
    expect(creds.map((c) => c.email)).toEqual(['art@studio.io', adminEmail, 'ghost@studio.io', supEmail]);
    for (const c of creds) expect(c.password_hash).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(JSON.stringify(creds)).not.toContain('first-user-pw');
    const keys = await query<Record<string, unknown>>('select * from auth.api_key where id = ?', [apiKey.id]);
    expect(keys[0]).toMatchObject({ key_hash: createHash('sha256').update(apiKey.token).digest('hex'), prefix: apiKey.token.slice(0, 12) });
    expect(keys[0]!.revoked_at).toBeTruthy();
    expect(JSON.stringify(keys)).not.toContain(apiKey.token.slice(12));
  });

  it('keeps signing keys and API keys across a restart', async () => {
    const key = await client.call.issueApiKey({ name: 'survivor' }, as(admin));
    const before = await query('select kid from auth.signing_key');
    expect(before).toHaveLength(2);
    await stop();
    await start();
    expect(await query('select kid from auth.signing_key')).toEqual(before);
    expect((await client.call.authenticate({ token: adminToken }, anon)).principal!.userId).toBe(admin.userId);
    expect((await client.call.authenticate({ token: key.token }, anon)).principal!.authKind).toBe('api_key');
  });

  it('is ready while its dependencies answer, and reports records when it does not', async () => {
    const ready = await fetch(`http://127.0.0.1:${auth.httpPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { checks: unknown }).checks).toEqual({ postgres: 'ok', nats: 'ok', records: 'ok' });
    await fake.stop();
    const notReady = await fetch(`http://127.0.0.1:${auth.httpPort}/readyz`);
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { detail: string }).detail).toMatch(/records/);
    expect((await failure(client.call.authenticate({ token: adminToken }, anon))).kind).toBe('unavailable');
  });
});
