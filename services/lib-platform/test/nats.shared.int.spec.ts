/**
 * The shared NATS pieces against a real server: the durable consumer set-up (created once
 * whatever the number of replicas racing, its ack wait brought up to date), the readiness check
 * and publish-with-a-flush.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteStreams, uniquePrefix } from '../../lib-testkit/src/nats.js';
import type { Logger } from '../src/logger.js';
import { announce } from '../src/nats/announce.js';
import { ensureEventsStream } from '../src/nats/connection.js';
import { durableConsumerInfo, ensureDurableConsumer } from '../src/nats/durable.consumer.js';
import { natsNames, type NatsNames } from '../src/nats/subjects.js';
import { pingNats } from '../src/readiness.nats.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

let nc: NatsConnection;
let jsm: JetStreamManager;
let prefix: string;
let names: NatsNames;

function recordingLogger(): { logger: Logger; warnings: { fields: Record<string, unknown>; msg: string }[] } {
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const logger = { warn: (fields: Record<string, unknown>, msg: string) => warnings.push({ fields, msg }) } as unknown as Logger;
  return { logger, warnings };
}

beforeAll(async () => {
  prefix = uniquePrefix('natsshared');
  names = natsNames(prefix);
  nc = await connect({ servers: NATS_URL, timeout: 3000 });
  jsm = await ensureEventsStream(nc, names);
});

afterAll(async () => {
  await nc?.drain();
  if (prefix) await deleteStreams(prefix);
});

describe('ensureDurableConsumer', () => {
  it('creates the consumer once when replicas race, with explicit acks from the first message and no delivery limit', async () => {
    const consumer = { stream: names.eventsStream, durable: `${prefix}durable`, ackWaitMs: 7000 };
    expect(await durableConsumerInfo(jsm, consumer.stream, consumer.durable)).toBeNull();
    await Promise.all(Array.from({ length: 4 }, () => ensureDurableConsumer(jsm, consumer)));
    const info = await durableConsumerInfo(jsm, consumer.stream, consumer.durable);
    expect(info?.config).toMatchObject({
      durable_name: consumer.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(7000),
      max_deliver: -1,
      max_ack_pending: 10_000,
    });
    const listed: string[] = [];
    for await (const c of jsm.consumers.list(consumer.stream)) listed.push(c.name);
    expect(listed.filter((n) => n === consumer.durable)).toHaveLength(1);
  });

  it('brings an existing consumer to the new ack wait', async () => {
    const consumer = { stream: names.eventsStream, durable: `${prefix}durable`, ackWaitMs: 3000 };
    await ensureDurableConsumer(jsm, consumer);
    expect((await durableConsumerInfo(jsm, consumer.stream, consumer.durable))?.config.ack_wait).toBe(nanos(3000));
  });

  it('fails when the stream does not exist', async () => {
    await expect(ensureDurableConsumer(jsm, { stream: `${prefix}MISSING`, durable: 'x', ackWaitMs: 1000 })).rejects.toThrow();
  });
});

describe('pingNats', () => {
  it('passes on an open connection and fails on a closed one', async () => {
    await expect(pingNats(nc)).resolves.toBeUndefined();
    const other = await connect({ servers: NATS_URL, timeout: 3000 });
    await other.close();
    await expect(pingNats(other)).rejects.toThrow(/closed/);
  });
});

describe('announce', () => {
  it('has the message on the server when it resolves', async () => {
    const subject = `${prefix}announce`;
    const listener = await connect({ servers: NATS_URL, timeout: 3000 });
    const got: unknown[] = [];
    listener.subscribe(subject, {
      callback: (_err, msg) => {
        got.push(msg.json());
      },
    });
    await listener.flush();
    const { logger, warnings } = recordingLogger();
    expect(await announce(nc, subject, { user_id: 'u1' }, { logger, failure: 'lost' })).toBe(true);
    await listener.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(got).toEqual([{ user_id: 'u1' }]);
    expect(warnings).toEqual([]);
    await listener.close();
  });

  it('never throws: a closed connection is a warning with the payload, and false', async () => {
    const closed = await connect({ servers: NATS_URL, timeout: 3000 });
    await closed.close();
    const { logger, warnings } = recordingLogger();
    expect(await announce(closed, `${prefix}announce`, { user_id: 'u2' }, { logger, failure: 'could not announce' })).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ msg: 'could not announce', fields: { user_id: 'u2' } });
  });
});
