/**
 * The events service in-process against the real PostgreSQL and NATS: stream → log → reads
 * and live announcements.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, parseContractEvent, type ContractEvent, type StreamEvent } from '@reelbase/lib-platform';
import type { Subscription } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';
import type { RunningEvents } from '../src/service.js';
import { eventsWorld, makeEvent, readAll, sqlClient, waitFor, waitForLastId, type EventsClient, type EventsWorld, type Publisher } from './helpers.js';

let world: EventsWorld;
let svc: RunningEvents;
let pub: Publisher;
let client: EventsClient;
let live: Subscription;
const liveRows: ContractEvent[] = [];
const published: StreamEvent[] = [];

const projectA = randomUUID();
const projectB = randomUUID();

async function publishAll(events: StreamEvent[]) {
  for (const e of events) {
    await pub.publish(e);
    published.push(e);
  }
}

beforeAll(async () => {
  world = await eventsWorld('ev', { EVENTS_ACK_WAIT_MS: '2000', EVENTS_LOCK_RETRY_MS: '100', EVENTS_LAG_REFRESH_MS: '200' });
  ({ svc, pub, client } = world);
  live = pub.nc.subscribe(pub.names.liveEvents, {
    callback: (_err, m) => {
      // What the gateway would refuse shows up as a row no assertion expects.
      const r = parseContractEvent(m.data);
      liveRows.push(r.ok ? r.event : ({ id: -1, entity_id: `refused: ${r.reason}` } as ContractEvent));
    },
  });
});

afterAll(async () => {
  live?.unsubscribe();
  await world?.close();
});

describe('events service', () => {
  it('appends stream messages with ids 1..N in order and reads them back', async () => {
    const batch = [
      makeEvent({ entity_type: 'Shot', project_id: projectA, action: 'create', changes: { code: 'sh010', status: 'wtg' } }),
      makeEvent({ entity_type: 'Shot', project_id: projectA, action: 'update', changes: { status: 'ip' } }),
      makeEvent({ entity_type: 'Asset', project_id: projectB, action: 'create', changes: { code: 'hero' } }),
      makeEvent({ entity_type: 'Task', project_id: projectA, action: 'delete', changes: {}, actor: null }),
      makeEvent({ entity_type: 'Project', project_id: null, action: 'create', changes: { name: 'Demo' } }),
    ];
    await publishAll(batch);
    await waitForLastId(client, batch.length);
    const all = await readAll(client);
    expect(all.map((e) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(all.map((e) => e.entityId)).toEqual(batch.map((e) => e.entity_id));
    const first = all[0]!;
    expect(first).toMatchObject({ entityType: 'Shot', action: 'create', projectId: projectA, actor: batch[0]!.actor });
    expect(JSON.parse(first.changesJson)).toEqual({ code: 'sh010', status: 'wtg' });
    expect(first.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Date.parse(first.createdAt)).toBe(Date.parse(batch[0]!.occurred_at));
    // Nulls travel as unset optional fields.
    expect(all[3]!.actor).toBeUndefined();
    expect(all[4]!.projectId).toBeUndefined();
  });

  it('answers newest first without after=, oldest first after an id', async () => {
    const newest = await client.list({ limit: 3 });
    expect(newest.items.map((e) => e.id)).toEqual([5, 4, 3]);
    expect(newest.lastId).toBe(5);
    const after = await client.list({ limit: 2, after: 1 });
    expect(after.items.map((e) => e.id)).toEqual([2, 3]);
    expect(after.lastId).toBe(5);
    const none = await client.list({ limit: 10, after: 5 });
    expect(none.items).toEqual([]);
    expect(none.lastId).toBe(5);
  });

  it('filters by entity_type and project_id', async () => {
    const shots = await client.list({ limit: 100, entityType: 'Shot' });
    expect(shots.items.map((e) => e.id)).toEqual([2, 1]);
    const inA = await client.list({ limit: 100, projectId: projectA, after: 0 });
    expect(inA.items.map((e) => e.id)).toEqual([1, 2, 4]);
    const shotsInB = await client.list({ limit: 100, projectId: projectB, entityType: 'Shot' });
    expect(shotsInB.items).toEqual([]);
    expect(shotsInB.lastId).toBe(5);
  });

  it('rejects a limit outside 1..1000 as invalid at query.limit', async () => {
    for (const limit of [0, 1001, -5]) {
      const err = await client.list({ limit }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).kind).toBe('invalid');
      expect((err as AppError).problems.map((p) => p.loc)).toEqual([['limit']]);
    }
    const bad = await client.list({ limit: 10, projectId: 'nope' }).catch((e: unknown) => e);
    expect((bad as AppError).problems.map((p) => p.loc)).toEqual([['project_id']]);
  });

  it('logs a re-published event_id once, even when JetStream does not de-duplicate it', async () => {
    const before = (await client.list({ limit: 1 })).lastId;
    const original = published[1]!;
    // A different msgID gets past the stream's duplicate window; the log must still drop it.
    await pub.publish(original, randomUUID());
    await pub.publish({ ...original, changes: { status: 'other' } }, randomUUID());
    const marker = makeEvent({ entity_type: 'Note' });
    await publishAll([marker]);
    await waitForLastId(client, before + 1);
    const all = await readAll(client);
    expect(all.map((e) => e.id)).toEqual(Array.from({ length: before + 1 }, (_, i) => i + 1));
    expect(all.at(-1)!.entityId).toBe(marker.entity_id);
    expect((await client.list({ limit: 1 })).lastId).toBe(before + 1);
    expect(all.filter((e) => e.entityId === original.entity_id)).toHaveLength(1);
  });

  it('terminates a malformed message and keeps going', async () => {
    const before = (await client.list({ limit: 1 })).lastId;
    await pub.publishRaw('{"this": "is not an event"');
    await pub.publishRaw(JSON.stringify({ ...makeEvent(), action: 'explode' }));
    await pub.publishRaw(JSON.stringify({ ...makeEvent(), changes: { bad: 'nul\u0000byte' } }));
    const after = makeEvent({ entity_type: 'Version' });
    await publishAll([after]);
    await waitForLastId(client, before + 1);
    const newest = await client.list({ limit: 5 });
    expect(newest.lastId).toBe(before + 1);
    expect(newest.items[0]!.entityId).toBe(after.entity_id);
    // Nothing is left unacked for redelivery: the bad messages were terminated, not ignored.
    const info = await waitFor(
      async () => {
        const jsm = await jetstreamManager(pub.nc);
        const i = await jsm.consumers.info(pub.names.eventsStream, pub.names.eventLogConsumer);
        return i.num_ack_pending === 0 && i.num_pending === 0 ? i : null;
      },
      5000,
      'consumer to settle',
    );
    expect(info.num_redelivered).toBe(0);
  });

  it('announces every appended row on live.events in id order, in the client shape', async () => {
    const more = Array.from({ length: 50 }, (_, i) => makeEvent({ entity_type: 'Task', changes: { i } }));
    const before = (await client.list({ limit: 1 })).lastId;
    await publishAll(more);
    const last = before + more.length;
    await waitForLastId(client, last);
    await waitFor(() => liveRows.length >= last, 10_000, 'live rows');
    expect(liveRows.map((r) => r.id)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    const logged = await readAll(client);
    expect(liveRows.map((r) => r.entity_id)).toEqual(logged.map((e) => e.entityId));
    const sample = liveRows[0]!;
    expect(Object.keys(sample).sort()).toEqual(['id', 'entity_type', 'entity_id', 'project_id', 'action', 'actor', 'changes', 'created_at'].sort());
    expect(sample.created_at).toBe(logged[0]!.createdAt);
    expect(sample.changes).toEqual(JSON.parse(logged[0]!.changesJson));
    expect(liveRows[3]!.actor).toBeNull();
  });

  it('serves /healthz, /readyz and /metrics', async () => {
    const base = `http://127.0.0.1:${svc.httpPort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { postgres: 'ok', nats: 'ok' } });
    const text = await (await fetch(`${base}/metrics`)).text();
    const appended = Number(/^events_appended_total\{[^}]*\} (\d+)/m.exec(text)?.[1]);
    expect(appended).toBe((await client.list({ limit: 1 })).lastId);
    expect(text).toMatch(/^events_consumer_lag\{[^}]*\} 0$/m);
    expect(text).toMatch(/events_batch_duration_seconds_count/);
    expect(text).toMatch(/^events_skipped_total\{reason="malformed",[^}]*\} 3$/m);
  });

  it('stops consuming when the lock connection dies, then takes the lock again without a gap', async () => {
    const sql = await sqlClient(world.db.url);
    try {
      const holders = await sql.query<{ pid: number }>(
        `select pid from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(holders).toHaveLength(1);
      await sql.query('select pg_terminate_backend(?)', [holders[0]!.pid]);
      const before = (await client.list({ limit: 1 })).lastId;
      const more = Array.from({ length: 30 }, () => makeEvent({ entity_type: 'Asset' }));
      await publishAll(more);
      await waitForLastId(client, before + more.length, 15_000);
      const all = await readAll(client);
      expect(all.map((e) => e.id)).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
      expect(
        all
          .slice(-30)
          .map((e) => e.entityId)
          .sort(),
      ).toEqual(more.map((e) => e.entity_id).sort());
      const newHolder = await sql.query<{ pid: number }>(
        `select pid from pg_locks where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(newHolder).toHaveLength(1);
      expect(newHolder[0]!.pid).not.toBe(holders[0]!.pid);
      expect(svc.writer.isActive).toBe(true);
    } finally {
      await sql.close();
    }
  });
});
