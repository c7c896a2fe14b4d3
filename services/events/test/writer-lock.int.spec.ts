/**
 * Two replicas against the same database and stream: the advisory lock lets exactly one
 * write at a time, the other takes over when it stops, and the log stays gapless.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { parseEventsConfig } from '../src/config.js';
import { startEvents, type RunningEvents } from '../src/service.js';
import { eventsClient, makeEvent, NATS_URL, publisher, readAll, sqlClient, waitForLastId, type Publisher } from './helpers.js';

let db: TestDatabase;
let prefix: string;
let pub: Publisher;
const services: RunningEvents[] = [];

function configFor(url: string, prefix: string) {
  return parseEventsConfig({
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    DATABASE_URL: url,
    NATS_URL,
    NATS_PREFIX: prefix,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    EVENTS_ACK_WAIT_MS: '2000',
    EVENTS_LOCK_RETRY_MS: '50',
    EVENTS_BATCH_MAX: '16',
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  prefix = uniquePrefix('evlock');
  pub = await publisher(prefix);
});

afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await pub?.close();
  await deleteStreams(prefix);
  await db?.drop();
});

describe('two writers', () => {
  it('never write at the same time; the log stays gapless and unique across a hand-over', async () => {
    const logger = createLogger('events', 'silent');
    // Started at once: both race for the lock (and for the migrations).
    services.push(...(await Promise.all([startEvents(configFor(db.url, prefix), logger), startEvents(configFor(db.url, prefix), logger)])));
    const [a, b] = services as [RunningEvents, RunningEvents];

    const sent = Array.from({ length: 400 }, (_, i) => makeEvent({ changes: { i } }));
    const activeSeen: number[] = [];
    const sampler = setInterval(() => activeSeen.push(Number(a.writer.isActive) + Number(b.writer.isActive)), 5);
    await Promise.all(sent.slice(0, 200).map((e) => pub.publish(e)));

    const client = eventsClient(a.grpcPort);
    try {
      await waitForLastId(client, 200, 15_000);
      expect(activeSeen.every((n) => n <= 1)).toBe(true);
      const [active, standby] = a.writer.isActive ? [a, b] : [b, a];
      expect(active.writer.isActive).toBe(true);
      expect(standby.writer.isActive).toBe(false);

      // The writer goes away mid-stream; the standby must take over without a gap.
      const more = Promise.all(sent.slice(200).map((e) => pub.publish(e)));
      await active.stop();
      await more;
      const standbyClient = eventsClient(standby.grpcPort);
      try {
        await waitForLastId(standbyClient, 400, 15_000);
        expect(standby.writer.isActive).toBe(true);
        const all = await readAll(standbyClient);
        expect(all.map((e) => e.id)).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
        expect(new Set(all.map((e) => e.entityId))).toEqual(new Set(sent.map((e) => e.entity_id)));
      } finally {
        standbyClient.close();
      }
      clearInterval(sampler);
      expect(activeSeen.every((n) => n <= 1)).toBe(true);

      const sql = await sqlClient(db.url);
      try {
        const [row] = await sql.query<{ n: string; distinct_ids: string }>(
          'select count(*) as n, count(distinct event_id) as distinct_ids from events.event_log',
        );
        expect(Number(row!.n)).toBe(400);
        expect(Number(row!.distinct_ids)).toBe(400);
      } finally {
        await sql.close();
      }
    } finally {
      clearInterval(sampler);
      client.close();
    }
  });
});
