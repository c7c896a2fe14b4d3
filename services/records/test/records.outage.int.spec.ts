/**
 * Dependencies going away under a running service: with NATS down writes keep working and
 * their events wait in the outbox until NATS is back; with PostgreSQL down calls fail fast
 * as `unavailable` instead of hanging. Each dependency is reached through a TCP proxy that
 * the test closes and reopens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, createGrpcClient, newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { recordsv1 } from '@reelbase/proto';
import { parseRecordsConfig } from '../src/config.js';
import { startRecords, type RunningRecords } from '../src/service.js';
import { StreamReader } from './stream.helper.js';
import { TcpProxy } from './tcp.proxy.js';

const asAdmin: CallContext = { requestId: 'outage', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };

let db: TestDatabase;
let prefix: string;
let pgProxy: TcpProxy;
let natsProxy: TcpProxy;
let running: RunningRecords;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let stream: StreamReader;

const metric = async (name: string) => {
  const text = await fetch(`http://127.0.0.1:${running.httpPort}/metrics`).then((r) => r.text());
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

const until = async (cond: () => Promise<boolean>, timeoutMs = 15_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

const create = (name: string) => client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name }) }, asAdmin).then((r) => r.record!);

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('outage');
  pgProxy = new TcpProxy(5432);
  natsProxy = new TcpProxy(4222);
  await pgProxy.up();
  await natsProxy.up();
  const dbUrl = new URL(db.url);
  dbUrl.port = String(pgProxy.port);
  running = await startRecords(
    parseRecordsConfig({
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      DATABASE_URL: dbUrl.toString(),
      NATS_URL: `nats://127.0.0.1:${natsProxy.port}`,
      NATS_PREFIX: prefix,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      OUTBOX_POLL_MS: '100',
    }),
  );
  client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'records',
    address: `127.0.0.1:${running.grpcPort}`,
    deadlineMs: 15_000,
  });
  stream = await StreamReader.open(prefix);
});

afterAll(async () => {
  client?.close();
  await pgProxy?.up().catch(() => {});
  await natsProxy?.up().catch(() => {});
  await running?.stop();
  await pgProxy?.down();
  await natsProxy?.down();
  await stream?.close();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('outages', () => {
  it('keeps writing while NATS is down and publishes the backlog, in order, once it is back', async () => {
    const first = await create('before');
    expect(await stream.exactly(first.id, 1)).toHaveLength(1);

    await natsProxy.down();
    const started = Date.now();
    const during = [await create('during-1'), await create('during-2'), await create('during-3')];
    expect(Date.now() - started).toBeLessThan(3000);
    await until(async () => (await metric('outbox_backlog')) === 3);
    const ready = await fetch(`http://127.0.0.1:${running.httpPort}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).detail).toMatch(/nats/);

    await natsProxy.up();
    await until(async () => (await metric('outbox_backlog')) === 0);
    const all = await stream.all();
    const seqs = during.map((r) => all.filter((e) => e.payload.entity_id === r.id).map((e) => e.seq));
    expect(seqs.every((s) => s.length === 1)).toBe(true);
    expect(seqs.flat()).toEqual([...seqs.flat()].sort((a, b) => a - b));
  }, 60_000);

  it('answers unavailable quickly while PostgreSQL is down, and recovers', async () => {
    const before = await create('pg-before');
    await pgProxy.down();
    for (const call of [() => create('pg-during'), () => client.call.getRecord({ entityType: 'Project', id: before.id }, asAdmin)]) {
      const started = Date.now();
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).kind).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(6000);
    }
    await pgProxy.up();
    await until(async () =>
      create('pg-after').then(
        () => true,
        () => false,
      ),
    );
    expect((await client.call.getRecord({ entityType: 'Project', id: before.id }, asAdmin)).record!.id).toBe(before.id);
  }, 60_000);
});
