/**
 * Durable JetStream pull consumers, set up the one way every service does it: explicit acks,
 * from the first message of the stream, never giving up on a message by itself (`max_deliver`
 * -1: the service terminates or fails a message explicitly), `max_ack_pending` 10 000.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, type ConsumerInfo, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';

const CONSUMER_NOT_FOUND = 10014;

/** A durable consumer: its stream, its name, and how long a delivered message may stay unacknowledged. */
export interface DurableConsumer {
  stream: string;
  durable: string;
  ackWaitMs: number;
}

/**
 * Creates the durable consumer, or brings its ack wait to `ackWaitMs` when it exists. Safe to
 * call from every replica at once.
 */
export async function ensureDurableConsumer(jsm: JetStreamManager, consumer: DurableConsumer): Promise<void> {
  const { stream, durable } = consumer;
  const ackWait = nanos(consumer.ackWaitMs);
  try {
    const info = await jsm.consumers.info(stream, durable);
    if (info.config.ack_wait !== ackWait) await jsm.consumers.update(stream, durable, { ack_wait: ackWait });
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND)) throw err;
  }
  try {
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      max_deliver: -1,
      max_ack_pending: 10_000,
    });
  } catch (err) {
    // Another replica created it between our info and add.
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
  }
}

/** The consumer's state (for lag and backlog gauges), or null when the server cannot be asked. */
export async function durableConsumerInfo(jsm: JetStreamManager, stream: string, durable: string): Promise<ConsumerInfo | null> {
  try {
    return await jsm.consumers.info(stream, durable);
  } catch {
    return null;
  }
}
