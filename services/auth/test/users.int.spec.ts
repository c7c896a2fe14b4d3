/**
 * A User's record and its login stay one: CreateUser, UpdateUser, ChangePassword and SetPassword
 * against the real PostgreSQL, over auth's real gRPC surface (records is the stand-in of
 * fake-records.ts, so the record side can be inspected and made to fail).
 */
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, createGrpcClient, createLogger, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { authv1, recordsv1 } from '@reelbase/proto';
import { parseAuthConfig, type AuthConfig } from '../src/config.js';
import { startAuth, type RunningAuth } from '../src/service.js';
import { startFakeRecords, type FakeRecords } from './fake-records.js';
import { anon, authTestEnv, failure } from './helpers.js';

const logger = createLogger('auth-test', 'silent');
const as = (userId: string, role: 'Admin' | 'Artist' = 'Admin'): CallContext => ({ requestId: 'test', principal: { userId, role, authKind: 'token' } });

let db: TestDatabase;
let prefix: string;
let fake: FakeRecords;
let config: AuthConfig;
let auth: RunningAuth;
let client: GrpcClient<authv1.AuthServiceClient>;
let sql: MikroORM;
let adminId: string;

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
const credentialOf = async (userId: string) =>
  (await query<{ email: string; password_hash: string | null }>('select "email", "password_hash" from "auth"."credential" where "user_id" = ?', [userId]))[0];
const emailInRecord = (id: string) => JSON.parse(fake.records.get(id)!.record.dataJson).email as string;
const loginStatus = (email: string, password: string) =>
  client.call.login({ email, password }, anon).then(
    () => 200,
    (e: AppError) => (e.kind === 'unauthenticated' ? 401 : e.kind),
  );
const createUser = async (data: Record<string, unknown>) => {
  const res = await client.call.createUser({ record: { entityType: 'User', dataJson: JSON.stringify(data) } }, as(adminId));
  return res.record!;
};
const patchUser = (id: string, data: Record<string, unknown>, ctx = as(adminId)) =>
  client.call.updateUser({ record: { entityType: 'User', id, dataJson: JSON.stringify(data) } }, ctx);

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('authusr');
  fake = await startFakeRecords();
  config = parseAuthConfig(authTestEnv(db.url, prefix, fake.port));
  await start();
  sql = await MikroORM.init({ clientUrl: db.url, entities: [], discovery: { warnWhenNoEntities: false } });
  const boss = await client.call.register({ email: 'boss@studio.io', password: 'first-user-pw', name: 'Boss' }, anon);
  adminId = recordsv1.Record.fromJSON(JSON.parse(boss.userJson)).id;
});

afterAll(async () => {
  await stop();
  await fake?.stop();
  await sql?.close();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('User records and their logins', () => {
  it('a User created as a record cannot log in until an Admin sets a password', async () => {
    const user = await createUser({ name: 'New', email: 'New@Studio.io', role: 'Artist' });
    expect(JSON.parse(user.dataJson)).toEqual({ name: 'New', email: 'new@studio.io', role: 'Artist' });
    expect(user.createdBy).toBe(adminId);
    expect(await credentialOf(user.id)).toEqual({ email: 'new@studio.io', password_hash: null });
    expect(await loginStatus('new@studio.io', '')).toBe(401);
    expect(await loginStatus('new@studio.io', 'anything-at-all')).toBe(401);

    expect((await failure(client.call.setPassword({ userId: user.id, password: 'first-password' }, as(user.id, 'Artist')))).kind).toBe('forbidden');
    expect((await failure(client.call.setPassword({ userId: user.id, password: 'short' }, as(adminId)))).problems).toEqual([
      expect.objectContaining({ loc: ['password'], type: 'string_too_short' }),
    ]);
    await client.call.setPassword({ userId: user.id, password: 'first-password' }, as(adminId));
    expect(await loginStatus('NEW@studio.io', 'first-password')).toBe(200);
    expect((await failure(client.call.setPassword({ userId: '0190a0b0-0000-7000-8000-0000000000ff', password: 'first-password' }, as(adminId)))).kind).toBe(
      'not_found',
    );
  });

  it('a taken address is refused on create, and no record is written', async () => {
    const before = fake.createCalls.length;
    const err = await failure(createUser({ name: 'Dup', email: 'BOSS@studio.io' }));
    expect([err.kind, err.code]).toEqual(['conflict', 'duplicate_code']);
    expect(fake.createCalls.length).toBe(before);
  });

  it('changing data.email moves the login; a taken address changes nothing', async () => {
    const reg = await client.call.register({ email: 'mover@studio.io', password: 'mover-password', name: 'Mover' }, as(adminId));
    const id = recordsv1.Record.fromJSON(JSON.parse(reg.userJson)).id;
    const res = await patchUser(id, { email: 'Moved@Studio.io' });
    expect(JSON.parse(res.record!.dataJson).email).toBe('moved@studio.io');
    expect(await loginStatus('mover@studio.io', 'mover-password')).toBe(401);
    expect(await loginStatus('moved@studio.io', 'mover-password')).toBe(200);

    const taken = await failure(patchUser(id, { email: 'boss@studio.io', name: 'Renamed' }));
    expect([taken.kind, taken.code]).toEqual(['conflict', 'duplicate_code']);
    expect(emailInRecord(id)).toBe('moved@studio.io');
    expect(JSON.parse(fake.records.get(id)!.record.dataJson).name).toBe('Mover');
    expect((await credentialOf(id))!.email).toBe('moved@studio.io');
    expect(await loginStatus('moved@studio.io', 'mover-password')).toBe(200);

    // records refuses the patch (a stale If-Match): neither side changes, the address stays free.
    fake.failNextUpdate = AppError.conflict('stale_write', 'the record changed since it was read');
    expect((await failure(patchUser(id, { email: 'third@studio.io' }))).code).toBe('stale_write');
    expect(emailInRecord(id)).toBe('moved@studio.io');
    expect((await credentialOf(id))!.email).toBe('moved@studio.io');
    expect(await query('select * from "auth"."email_claim"')).toEqual([]);

    expect((await failure(patchUser(id, { email: null }))).problems).toEqual([expect.objectContaining({ loc: ['data', 'email'] })]);
    expect((await failure(patchUser(id, { email: 'x@studio.io' }, as(id, 'Artist')))).kind).toBe('forbidden');
  });

  it('two writers racing for one address: exactly one gets it', async () => {
    const a = await createUser({ name: 'A', email: 'a@studio.io' });
    const b = await createUser({ name: 'B', email: 'b@studio.io' });
    const results = await Promise.allSettled([
      patchUser(a.id, { email: 'wanted@studio.io' }),
      patchUser(b.id, { email: 'wanted@studio.io' }),
      createUser({ name: 'C', email: 'wanted@studio.io' }),
      client.call.register({ email: 'wanted@studio.io', password: 'register-pw', name: 'D' }, as(adminId)),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as AppError).code).toBe('duplicate_code');
    const holders = await query<{ user_id: string }>('select "user_id" from "auth"."credential" where "email" = ?', ['wanted@studio.io']);
    expect(holders).toHaveLength(1);
    const records = [...fake.records.values()].filter((s) => !s.retired && JSON.parse(s.record.dataJson).email === 'wanted@studio.io');
    expect(records.map((s) => s.record.id)).toEqual([holders[0]!.user_id]);
  });

  it('the caller changes their own password; a wrong old one is forbidden', async () => {
    const reg = await client.call.register({ email: 'self@studio.io', password: 'self-password', name: 'Self' }, as(adminId));
    const id = recordsv1.Record.fromJSON(JSON.parse(reg.userJson)).id;
    const self = as(id, 'Artist');
    const wrong = await failure(client.call.changePassword({ oldPassword: 'not-my-password', newPassword: 'self-password-2' }, self));
    expect(wrong.kind).toBe('forbidden');
    expect((await failure(client.call.changePassword({ oldPassword: 'self-password', newPassword: 'short' }, self))).problems).toEqual([
      expect.objectContaining({ loc: ['new_password'], type: 'string_too_short' }),
    ]);
    expect((await failure(client.call.changePassword({ oldPassword: 'self-password', newPassword: 'self-password-2' }, anon))).kind).toBe('unauthenticated');
    await client.call.changePassword({ oldPassword: 'self-password', newPassword: 'self-password-2' }, self);
    expect(await loginStatus('self@studio.io', 'self-password')).toBe(401);
    expect(await loginStatus('self@studio.io', 'self-password-2')).toBe(200);
  });

  it('a claim left by a write that died half-way is finished at start-up from what the record says', async () => {
    const kept = await createUser({ name: 'Kept', email: 'kept@studio.io' });
    const dropped = await createUser({ name: 'Dropped', email: 'dropped@studio.io' });
    await stop();
    // As if auth died after records committed the first change, and before the second reached records.
    fake.setData(kept.id, { email: 'kept-new@studio.io' });
    await query(
      `insert into "auth"."email_claim" ("user_id", "email", "created_at") values (?, ?, now() - interval '1 minute'), (?, ?, now() - interval '1 minute')`,
      [kept.id, 'kept-new@studio.io', dropped.id, 'dropped-new@studio.io'],
    );
    await start();
    for (let i = 0; i < 100 && (await query('select 1 from "auth"."email_claim"')).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await query('select * from "auth"."email_claim"')).toEqual([]);
    expect((await credentialOf(kept.id))!.email).toBe('kept-new@studio.io');
    expect((await credentialOf(dropped.id))!.email).toBe('dropped@studio.io');
  });
});
