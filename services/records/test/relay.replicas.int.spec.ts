/**
 * Two records replicas on one database: one relay holds the outbox lock and drains every
 * replica's rows; when it stops, the other takes over. Each write is published exactly once
 * and each record's events stay in write order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, type TestDatabase } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import type { RunningRecords } from '../src/service.js';
import { startRecordsReplica } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const asAdmin: CallContext = { requestId: 'r', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };

let db: TestDatabase;
let prefix: string;
const replicas: RunningRecords[] = [];
const clients: GrpcClient<recordsv1.RecordsServiceClient>[] = [];
let stream: StreamReader;

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('relay');
  for (let i = 0; i < 2; i++) {
    const { running, client } = await startRecordsReplica(db.url, prefix, String(i), { OUTBOX_POLL_MS: '100' });
    replicas.push(running);
    clients.push(client);
  }
  stream = await StreamReader.open(prefix);
});

afterAll(async () => {
  for (const c of clients) c.close();
  await stream?.close();
  for (const r of replicas) await r.stop();
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

async function burst(from: GrpcClient<recordsv1.RecordsServiceClient>[], n: number): Promise<string[]> {
  const ids = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const c = from[i % from.length]!;
      const rec = (await c.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: `p${i}`, code: `p${i}` }) }, asAdmin)).record!;
      // Two updates per record, through the other replica, to check per-record order.
      const other = from[(i + 1) % from.length]!;
      await other.call.updateRecord({ entityType: 'Project', id: rec.id, dataJson: JSON.stringify({ step: 1 }) }, asAdmin);
      await c.call.updateRecord({ entityType: 'Project', id: rec.id, dataJson: JSON.stringify({ step: 2 }) }, asAdmin);
      return rec.id;
    }),
  );
  return ids;
}

async function settle(expected: number): Promise<Awaited<ReturnType<StreamReader['all']>>> {
  const until = Date.now() + 15_000;
  let all = await stream.all();
  while (all.length < expected && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    all = await stream.all();
  }
  await new Promise((r) => setTimeout(r, 500));
  return stream.all();
}

describe('outbox relay with two replicas', () => {
  it('publishes every write once, in per-record order, and fails over when the lock holder stops', async () => {
    const first = await burst(clients, 60);
    let all = await settle(180);
    expect(all).toHaveLength(180);
    expect(new Set(all.map((e) => e.payload.event_id)).size).toBe(180);
    for (const id of first) {
      const mine = all.filter((e) => e.payload.entity_id === id).map((e) => `${e.payload.action}:${String(e.payload.changes.step ?? '')}`);
      expect(mine).toEqual(['create:', 'update:1', 'update:2']);
    }

    // Stop the first replica; whichever held the lock, the survivor now drains everything.
    await replicas[0]!.stop();
    const second = await burst([clients[1]!], 20);
    all = await settle(240);
    expect(all).toHaveLength(240);
    expect(new Set(all.map((e) => e.payload.event_id)).size).toBe(240);
    for (const id of second) expect(all.filter((e) => e.payload.entity_id === id)).toHaveLength(3);
  });
});
