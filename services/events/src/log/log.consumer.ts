/**
 * The writer's durable pull consumer on the EVENTS stream.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { NatsNames } from '@reelbase/lib-platform';

const CONSUMER_NOT_FOUND = 10014;

/**
 * Creates the durable consumer (explicit acks, from the first message of the stream), or
 * brings its ack wait to `ackWaitMs` when it exists. Safe to call from every replica.
 */
export async function ensureLogConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  const ackWait = nanos(ackWaitMs);
  try {
    const info = await jsm.consumers.info(names.eventsStream, names.eventLogConsumer);
    if (info.config.ack_wait !== ackWait) {
      await jsm.consumers.update(names.eventsStream, names.eventLogConsumer, { ack_wait: ackWait });
    }
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND)) throw err;
  }
  try {
    await jsm.consumers.add(names.eventsStream, {
      durable_name: names.eventLogConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      // Never give up on an event: a message the log cannot take is terminated explicitly.
      max_deliver: -1,
      max_ack_pending: 10_000,
    });
  } catch (err) {
    // Another replica created it between our info and add.
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
  }
}

/** Messages of the consumer not yet delivered, or null when it cannot be asked. */
export async function consumerLag(jsm: JetStreamManager, names: NatsNames): Promise<number | null> {
  try {
    const info = await jsm.consumers.info(names.eventsStream, names.eventLogConsumer);
    return info.num_pending;
  } catch {
    return null;
  }
}
