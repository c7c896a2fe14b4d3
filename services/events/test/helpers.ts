/**
 * Shared pieces of the events integration tests: event payloads, publishing to the EVENTS
 * stream, a ListEvents client, the service started on a database of its own, and polling helpers.
 */
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { MikroORM } from '@mikro-orm/postgresql';
import { eventsv1 } from '@reelbase/proto';
import {
  createGrpcClient,
  createLogger,
  encodeStreamEvent,
  isoMicros,
  natsNames,
  newId,
  systemContext,
  type NatsNames,
  type StreamEvent,
} from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { parseEventsConfig } from '../src/config.js';
import { startEvents, type RunningEvents } from '../src/service.js';

export const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/** A payload as the records relay publishes it. */
export function makeEvent(over: Partial<StreamEvent> = {}): StreamEvent {
  return {
    event_id: newId(),
    entity_type: 'Shot',
    entity_id: randomUUID(),
    project_id: null,
    action: 'create',
    actor: randomUUID(),
    changes: { code: `sh${Math.floor(Math.random() * 1000)}` },
    occurred_at: isoMicros(new Date()),
    ...over,
  };
}

export interface Publisher {
  nc: NatsConnection;
  js: JetStreamClient;
  names: NatsNames;
  /** Publishes `e` on its subject; `msgID` defaults to the event_id, as the relay does. */
  publish(e: StreamEvent, msgID?: string): Promise<void>;
  /** Publishes raw bytes on an events subject. */
  publishRaw(data: string, msgID?: string): Promise<void>;
  close(): Promise<void>;
}

export async function publisher(prefix: string): Promise<Publisher> {
  const nc = await connect({ servers: NATS_URL, timeout: 3000 });
  const js = jetstream(nc);
  const names = natsNames(prefix);
  return {
    nc,
    js,
    names,
    async publish(e, msgID = e.event_id) {
      await js.publish(names.eventSubject(e.entity_type, e.action), encodeStreamEvent(e), { msgID });
    },
    async publishRaw(data, msgID = randomUUID()) {
      await js.publish(names.eventSubject('Shot', 'update'), data, { msgID });
    },
    close: () => nc.close(),
  };
}

export type EventsClient = ReturnType<typeof eventsClient>;

/** A ListEvents client for `port`. */
export function eventsClient(port: number) {
  const c = createGrpcClient(eventsv1.EventsServiceClient, eventsv1.EventsServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'events',
    address: `127.0.0.1:${port}`,
  });
  return {
    list: (req: Partial<eventsv1.ListEventsRequest> & { limit: number }) => c.call.listEvents({ hiddenProjectIds: [], ...req }, systemContext()),
    close: () => c.close(),
  };
}

/** Every event in the log, oldest first, paging with `after`. */
export async function readAll(client: EventsClient): Promise<eventsv1.Event[]> {
  const all: eventsv1.Event[] = [];
  for (;;) {
    const page = await client.list({ limit: 1000, after: all.at(-1)?.id ?? 0 });
    all.push(...page.items);
    if (!page.truncated && page.items.length < 1000) return all;
  }
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function waitFor<T>(fn: () => Promise<T> | T, timeoutMs = 10_000, what = 'condition'): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the log's last_id reaches `n`. */
export function waitForLastId(client: EventsClient, n: number, timeoutMs = 10_000): Promise<unknown> {
  return waitFor(async () => (await client.list({ limit: 1 })).lastId >= n, timeoutMs, `last_id ${n}`);
}

/** A plain SQL connection to the test database (for checks the API does not expose). */
export async function sqlClient(url: string) {
  const orm = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, allowGlobalContext: true, debug: false });
  return {
    query: <R>(sql: string, params: unknown[] = []) => orm.em.getConnection().execute<R[]>(sql, params),
    close: () => orm.close(),
  };
}

/** The events service on a database and NATS prefix of its own, with a publisher and a ListEvents client. */
export interface EventsWorld {
  db: TestDatabase;
  prefix: string;
  svc: RunningEvents;
  pub: Publisher;
  client: EventsClient;
  close(): Promise<void>;
}

/** Starts an {@link EventsWorld}; `env` adds to (or overrides) the service's settings. */
export async function eventsWorld(name: string, env: Record<string, string> = {}): Promise<EventsWorld> {
  const db = await createTestDatabase();
  const prefix = uniquePrefix(name);
  const config = parseEventsConfig({
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    DATABASE_URL: db.url,
    NATS_URL,
    NATS_PREFIX: prefix,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    ...env,
  });
  const svc = await startEvents(config, createLogger('events', 'silent'));
  const pub = await publisher(prefix);
  const client = eventsClient(svc.grpcPort);
  return {
    db,
    prefix,
    svc,
    pub,
    client,
    async close() {
      client.close();
      await pub.close();
      await svc.stop();
      await deleteStreams(prefix);
      await db.drop();
    },
  };
}
