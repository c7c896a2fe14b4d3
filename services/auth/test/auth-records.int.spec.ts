/**
 * auth with the real records service in-process (both on the real PostgreSQL and NATS).
 * Skipped when records has not been built.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, createLogger, type AppError, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import { authv1, recordsv1 } from '@reelbase/proto';
import { parseAuthConfig } from '../src/config.js';
import { startAuth, type RunningAuth } from '../src/service.js';

const recordsEntry = fileURLToPath(new URL('../../records/dist/index.js', import.meta.url));

interface RecordsModule {
  parseRecordsConfig(env: Record<string, string>): unknown;
  startRecords(config: unknown, logger?: unknown): Promise<{ grpcPort: number; stop(): Promise<void> }>;
}

const logger = createLogger('auth-test', 'silent');
const anon: CallContext = { requestId: 'test' };
const as = (p: authv1.Principal): CallContext => ({
  requestId: 'test',
  principal: { userId: p.userId, role: p.role as 'Admin', authKind: p.authKind as 'token' },
});

describe.skipIf(!existsSync(recordsEntry))('auth with the real records service', () => {
  let db: TestDatabase;
  let prefix: string;
  let records: { grpcPort: number; stop(): Promise<void> };
  let auth: RunningAuth;
  let client: GrpcClient<authv1.AuthServiceClient>;
  let recordsClient: GrpcClient<recordsv1.RecordsServiceClient>;

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = uniquePrefix('authrec');
    const mod = (await import(recordsEntry)) as RecordsModule;
    const env = {
      DATABASE_URL: db.url,
      NATS_PREFIX: prefix,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
    };
    records = await mod.startRecords(mod.parseRecordsConfig(env), logger);
    auth = await startAuth(parseAuthConfig({ ...env, RECORDS_ADDR: `127.0.0.1:${records.grpcPort}`, PASSWORD_SCRYPT_COST: '1024' }), logger);
    client = createGrpcClient(authv1.AuthServiceClient, authv1.AuthServiceService, {
      internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
      name: 'auth',
      address: `127.0.0.1:${auth.grpcPort}`,
    });
    recordsClient = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
      name: 'records',
      address: `127.0.0.1:${records.grpcPort}`,
    });
  });

  afterAll(async () => {
    client?.close();
    recordsClient?.close();
    await auth?.stop();
    await records?.stop();
    await db?.drop();
    if (prefix) await deleteStreams(prefix);
  });

  it('bootstraps, registers, logs in, and rejects a user once records retires them', async () => {
    expect((await client.call.getBootstrap({}, anon)).done).toBe(false);
    const boot = await client.call.register({ email: 'boss@studio.io', password: 'first-user-pw', name: 'Boss' }, anon);
    expect((await client.call.getBootstrap({}, anon)).done).toBe(true);
    // A login token's answer carries its expiry (the default 12-hour lifetime); an API key's is 0.
    const bootAuth = await client.call.authenticate({ token: boot.accessToken! }, anon);
    expect(Math.abs(bootAuth.expiresAtUnix - (Math.floor(Date.now() / 1000) + 43_200))).toBeLessThanOrEqual(5);
    const key = await client.call.issueApiKey({ name: 'farm' }, as(bootAuth.principal!));
    expect((await client.call.authenticate({ token: key.token }, anon)).expiresAtUnix).toBe(0);
    const bossRecord = recordsv1.Record.fromJSON(JSON.parse(boot.userJson));
    const admin = (await client.call.authenticate({ token: boot.accessToken! }, anon)).principal!;
    expect(admin).toMatchObject({ userId: bossRecord.id, role: 'Admin', authKind: 'token' });

    const reg = await client.call.register({ email: 'art@studio.io', password: 'artist-pw-1', name: 'Art', role: 'Coordinator' }, as(admin));
    const artId = recordsv1.Record.fromJSON(JSON.parse(reg.userJson)).id;
    const stored = await recordsClient.call.getRecord({ entityType: 'User', id: artId }, as(admin));
    expect(JSON.parse(stored.record!.dataJson)).toMatchObject({ name: 'Art', email: 'art@studio.io', role: 'Coordinator', login_enabled: true });

    const login = await client.call.login({ email: 'art@studio.io', password: 'artist-pw-1' }, anon);
    expect((await client.call.authenticate({ token: login.accessToken }, anon)).principal).toMatchObject({ userId: artId, role: 'Coordinator' });

    await recordsClient.call.updateRecord({ entityType: 'User', id: artId, dataJson: JSON.stringify({ login_enabled: false }) }, as(admin));
    const disabled = (await client.call.authenticate({ token: login.accessToken }, anon).catch((e: unknown) => e)) as AppError;
    expect(disabled.kind).toBe('unauthenticated');
    await recordsClient.call.updateRecord({ entityType: 'User', id: artId, dataJson: JSON.stringify({ login_enabled: true }) }, as(admin));
    await client.call.authenticate({ token: login.accessToken }, anon);

    await recordsClient.call.retireRecord({ entityType: 'User', id: artId }, as(admin));
    const retired = (await client.call.authenticate({ token: login.accessToken }, anon).catch((e: unknown) => e)) as AppError;
    expect(retired.kind).toBe('unauthenticated');
    const relogin = (await client.call.login({ email: 'art@studio.io', password: 'artist-pw-1' }, anon).catch((e: unknown) => e)) as AppError;
    expect(relogin.kind).toBe('unauthenticated');
  });

  it('creates a User with the id auth chose and moves its login with If-Match honoured by records', async () => {
    const boss = await client.call.login({ email: 'boss@studio.io', password: 'first-user-pw' }, anon);
    const admin = (await client.call.authenticate({ token: boss.accessToken }, anon)).principal!;
    const created = (
      await client.call.createUser(
        { record: { entityType: 'User', dataJson: JSON.stringify({ name: 'Rec', email: 'Rec@studio.io', role: 'Artist' }) } },
        as(admin),
      )
    ).record!;
    expect(created.createdBy).toBe(admin.userId);
    const stored = (await recordsClient.call.getRecord({ entityType: 'User', id: created.id }, as(admin))).record!;
    expect(JSON.parse(stored.dataJson)).toMatchObject({ email: 'rec@studio.io' });
    await client.call.setPassword({ userId: created.id, password: 'rec-password' }, as(admin));

    const patch = (ifMatch: string) => ({ record: { entityType: 'User', id: created.id, dataJson: JSON.stringify({ email: 'rec2@studio.io' }), ifMatch } });
    const stale = (await client.call.updateUser(patch('2000-01-01T00:00:00.000000Z'), as(admin)).catch((e: unknown) => e)) as AppError;
    expect(stale.code).toBe('stale_write');
    await client.call.login({ email: 'rec@studio.io', password: 'rec-password' }, anon);

    const moved = (await client.call.updateUser(patch(stored.updatedAt), as(admin))).record!;
    expect(JSON.parse(moved.dataJson).email).toBe('rec2@studio.io');
    await client.call.login({ email: 'rec2@studio.io', password: 'rec-password' }, anon);
    const old = (await client.call.login({ email: 'rec@studio.io', password: 'rec-password' }, anon).catch((e: unknown) => e)) as AppError;
    expect(old.kind).toBe('unauthenticated');
  });
});
