/**
 * The one outbox relay against the real PostgreSQL and NATS: two relays (two replicas) on one
 * table publish every row exactly once in `seq` order, a commit wakes the relay at once (no
 * poll; on the next turn of the event loop, after the committing code ran on), a commit's published row
 * is deleted by the next commit's step (or after `lingerMs`), a row published before a crash is
 * re-published as a JetStream duplicate and then deleted, and a second table with its own lock drains independently.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../lib-testkit/src/database.js';
import { deleteStreams, uniquePrefix } from '../../lib-testkit/src/nats.js';
import { InProcessBus } from '../src/bus.js';
import { LockedConnection, openOrm } from '../src/db.js';
import { newId } from '../src/ids.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { ensureEventsStream } from '../src/nats/connection.js';
import { natsNames, type NatsNames } from '../src/nats/subjects.js';
import { OutboxRelay, type OutboxTopics } from '../src/outbox/outbox.relay.js';
import { OutboxTable } from '../src/outbox/outbox.table.js';
import { encodeStreamEvent, parseStreamEvent, type StreamEvent } from '../src/stream-event.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const logger = createLogger('outbox-int', 'silent');

let db: TestDatabase;
let a: MikroORM;
let b: MikroORM;
let nc: NatsConnection;
let jsm: JetStreamManager;
let prefix: string;
let names: NatsNames;
const relays: OutboxRelay[] = [];
const knex = (orm: MikroORM) => orm.em.getConnection().getKnex();

function event(i: number): StreamEvent {
  return {
    event_id: newId(),
    entity_type: 'Project',
    entity_id: newId(),
    project_id: null,
    action: 'update',
    actor: null,
    changes: { i },
    occurred_at: new Date().toISOString(),
  };
}

async function append(table: OutboxTable, events: StreamEvent[]): Promise<void> {
  await knex(a).transaction(async (trx) => {
    for (const e of events) await table.append(trx, names.eventSubject(e.entity_type, e.action), e.event_id, encodeStreamEvent(e));
  });
}

/** Every message of the test's EVENTS stream, in stream order. */
async function published(): Promise<{ msgId: string | undefined; event: StreamEvent }[]> {
  const info = await jsm.streams.info(names.eventsStream);
  const out: { msgId: string | undefined; event: StreamEvent }[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.last_seq > 0; seq++) {
    const m = await jsm.streams.getMessage(names.eventsStream, { seq });
    if (!m) continue;
    const parsed = parseStreamEvent(m.data);
    if (!parsed.ok) throw new Error(parsed.reason);
    out.push({ msgId: m.header?.get('Nats-Msg-Id'), event: parsed.event });
  }
  return out;
}

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function relay(
  orm: MikroORM,
  table: string,
  lockKey: string,
  metrics: Metrics,
  pollMs: number,
  extra: { afterPublish?: () => void; batchSize?: number; lingerMs?: number } = {},
) {
  const r = new OutboxRelay({ db: knex(orm), table, lockKey, nc, names, logger, metrics, pollMs, ...extra });
  relays.push(r);
  return r;
}

/** A started relay on relay_a.outbox that only a commit announced on the returned bus wakes (its poll is a minute). */
function wokenRelay(metrics: Metrics, extra: Parameters<typeof relay>[5] = {}) {
  const bus = new InProcessBus<OutboxTopics>();
  const r = relay(a, 'relay_a.outbox', 'test:outbox-relay', metrics, 60_000, extra);
  r.wakeOn(bus);
  r.start();
  return { bus, r };
}

beforeAll(async () => {
  db = await createTestDatabase();
  a = await openOrm({ clientUrl: db.url, schema: 'relay_a', entities: [], migrations: [], logger });
  b = await openOrm({ clientUrl: db.url, schema: 'relay_a', entities: [], migrations: [], logger });
  for (const t of ['relay_a.outbox', 'relay_a.other_outbox']) {
    await knex(a).raw(`create table ${t} (seq bigserial primary key, event_id uuid not null, subject text not null, payload jsonb not null)`);
  }
  prefix = uniquePrefix('outbox');
  names = natsNames(prefix);
  nc = await connect({ servers: NATS_URL, timeout: 3000 });
  jsm = await ensureEventsStream(nc, names);
});

afterAll(async () => {
  for (const r of relays) await r.stop();
  await nc?.drain();
  await a?.close(true);
  await b?.close(true);
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('OutboxRelay (PostgreSQL + NATS)', () => {
  const table = new OutboxTable('relay_a.outbox');

  it('refuses a table name that is not schema.table', () => {
    expect(() => new OutboxTable('outbox; drop table x')).toThrow(/schema\.table/);
    expect(() => new OutboxTable('records')).toThrow(/schema\.table/);
  });

  it('publishes every row once, in seq order, with Nats-Msg-Id = event_id, when two replicas race', async () => {
    const metricsA = new Metrics('outbox-a');
    const metricsB = new Metrics('outbox-b');
    const one = relay(a, 'relay_a.outbox', 'test:outbox-relay', metricsA, 50, { batchSize: 7 });
    const two = relay(b, 'relay_a.outbox', 'test:outbox-relay', metricsB, 50, { batchSize: 7 });
    const events = Array.from({ length: 40 }, (_, i) => event(i));
    await append(table, events.slice(0, 20));
    one.start();
    two.start();
    await append(table, events.slice(20));
    await until(async () => (await table.count(knex(a))) === 0);
    const out = await published();
    expect(out.map((m) => m.event.event_id)).toEqual(events.map((e) => e.event_id));
    expect(out.map((m) => m.msgId)).toEqual(events.map((e) => e.event_id));
    const text = (await metricsA.registry.metrics()) + (await metricsB.registry.metrics());
    const counts = [...text.matchAll(/^outbox_published_total\{duplicate="false"[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(counts.reduce((x, y) => x + y, 0)).toBe(40);
    await one.stop();
    await two.stop();
  });

  it('drains at once when the bus says a write committed, without waiting for the poll', async () => {
    const { bus, r } = wokenRelay(new Metrics('outbox-wake'));
    await new Promise((res) => setTimeout(res, 300));
    const before = (await published()).length;
    const e = event(1);
    await append(table, [e]);
    bus.emit('committed', e);
    await until(async () => (await published()).length === before + 1, 3000);
    expect((await published()).at(-1)!.event.event_id).toBe(e.event_id);
    await r.stop();
  });

  it('reads the next batch while a batch is being acknowledged: each row once, in seq order, the outbox emptied', async () => {
    const metrics = new Metrics('outbox-overlap');
    const { bus, r } = wokenRelay(metrics, { batchSize: 3 });
    await new Promise((res) => setTimeout(res, 300));
    const before = (await published()).length;
    const events = Array.from({ length: 60 }, (_, i) => event(i));
    // Commits keep arriving while the relay drains, so most steps read beside a batch in flight.
    for (let i = 0; i < events.length; i += 2) {
      await append(table, events.slice(i, i + 2));
      bus.emit('committed', events[i]!);
    }
    await until(async () => (await table.count(knex(a))) === 0);
    const out = (await published()).slice(before);
    expect(out.map((m) => m.event.event_id)).toEqual(events.map((e) => e.event_id));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^outbox_published_total\{duplicate="false"[^}]*\} 60$/m);
    await r.stop();
  });

  it('starts the drain a commit asks for after the committing code has run on, once for the commits of a turn', async () => {
    const { bus, r } = wokenRelay(new Metrics('outbox-wake-later'));
    await new Promise((res) => setTimeout(res, 300));
    const before = (await published()).length;
    const nudge = vi.spyOn(r, 'nudge');
    const two = [event(4), event(5)];
    await append(table, two);
    for (const e of two) bus.emit('committed', e);
    // The write answers its caller first: nothing of the relay ran inside emit.
    expect(nudge).not.toHaveBeenCalled();
    await new Promise((res) => setImmediate(res));
    expect(nudge).toHaveBeenCalledTimes(1);
    await until(async () => (await published()).length === before + 2, 3000);
    await r.stop();
  });

  it("leaves a commit's published row to the next commit's step to delete, or to lingerMs when none comes", async () => {
    const { bus, r } = wokenRelay(new Metrics('outbox-linger'), { lingerMs: 1000 });
    await until(async () => (await table.count(knex(a))) === 0);
    const before = (await published()).length;
    const ids = async () =>
      ((await knex(a).raw('select event_id from relay_a.outbox order by seq')) as { rows: { event_id: string }[] }).rows.map((x) => x.event_id);
    const first = event(6);
    await append(table, [first]);
    bus.emit('committed', first);
    await until(async () => (await published()).length === before + 1, 3000);
    await new Promise((res) => setTimeout(res, 100));
    // Published and acknowledged, the row waits for the next step instead of a statement of its own.
    expect(await ids()).toEqual([first.event_id]);
    const second = event(7);
    await append(table, [second]);
    bus.emit('committed', second);
    await until(async () => (await published()).length === before + 2, 3000);
    await new Promise((res) => setTimeout(res, 100));
    // The step that read the second row deleted the first.
    expect(await ids()).toEqual([second.event_id]);
    // No commit comes: lingerMs later a step deletes it.
    await until(async () => (await table.count(knex(a))) === 0, 3000);
    expect((await published()).slice(before).map((m) => m.event.event_id)).toEqual([first.event_id, second.event_id]);
    await r.stop();
  });

  it("turns synchronous_commit off for a deleting step's own transaction only, never for the connection", async () => {
    const conn = (await LockedConnection.tryAcquire(knex(a), 'test:outbox-sync'))!;
    try {
      const e = event(8);
      await append(table, [e]);
      const [row] = await table.nextBatch(conn, [], 10);
      expect(row!.eventId).toBe(e.event_id);
      await table.nextBatch(conn, [row!.seq], 10);
      expect(await table.count(knex(a))).toBe(0);
      // The connection goes back to the pool as it came: every other write on it waits for its flush.
      expect(await conn.query<{ synchronous_commit: string }>('show synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
    } finally {
      await conn.release();
    }
  });

  it('re-publishes a row whose delete a crash prevented; JetStream keeps one copy and the row is deleted', async () => {
    const e = event(2);
    await append(table, [e]);
    // First relay: publishes, then "crashes" (the hook throws before the delete step).
    let crashed = false;
    const metrics = new Metrics('outbox-crash');
    const first = relay(a, 'relay_a.outbox', 'test:outbox-relay', metrics, 60_000, {
      afterPublish: () => {
        crashed = true;
        throw new Error('crash after publish');
      },
    });
    first.start();
    await until(async () => crashed);
    await first.stop();
    expect(await table.count(knex(a))).toBe(1);
    const copies = () => published().then((all) => all.filter((m) => m.event.event_id === e.event_id).length);
    expect(await copies()).toBe(1);
    // The next relay (another replica) publishes it again: a duplicate, then the row goes.
    const metricsNext = new Metrics('outbox-next');
    const next = relay(b, 'relay_a.outbox', 'test:outbox-relay', metricsNext, 50);
    next.start();
    await until(async () => (await table.count(knex(a))) === 0);
    expect(await copies()).toBe(1);
    expect(await metricsNext.registry.metrics()).toMatch(/^outbox_published_total\{duplicate="true"[^}]*\} 1$/m);
    await next.stop();
  });

  it('drains a second table under its own lock and metric names while the first lock is held elsewhere', async () => {
    const other = new OutboxTable('relay_a.other_outbox');
    const holder = relay(b, 'relay_a.outbox', 'test:outbox-relay', new Metrics('outbox-holder'), 60_000);
    holder.start();
    await new Promise((res) => setTimeout(res, 200));
    const metrics = new Metrics('outbox-other');
    const r = new OutboxRelay({
      db: knex(a),
      table: 'relay_a.other_outbox',
      lockKey: 'test:other-outbox-relay',
      nc,
      names,
      logger,
      metrics,
      metricNames: { published: 'other_outbox_published_total', backlog: 'other_outbox_backlog' },
      pollMs: 50,
    });
    relays.push(r);
    const e = event(3);
    await append(other, [e]);
    r.start();
    await until(async () => (await other.count(knex(a))) === 0);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^other_outbox_published_total\{duplicate="false"[^}]*\} 1$/m);
    expect(text).toMatch(/^other_outbox_backlog\{[^}]*\} 0$/m);
    await r.stop();
    await holder.stop();
  });
});
