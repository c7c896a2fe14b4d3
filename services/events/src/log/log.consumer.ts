/**
 * The writer's durable pull consumer on the EVENTS stream (lib-platform's durable consumer set-up:
 * explicit acks, from the first message of the stream, never given up on: a message the log
 * cannot take is terminated explicitly).
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { durableConsumerInfo, ensureDurableConsumer, type NatsNames } from '@reelbase/lib-platform';

/** Creates the durable consumer, or brings its ack wait to `ackWaitMs` when it exists. Safe to call from every replica. */
export function ensureLogConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  return ensureDurableConsumer(jsm, { stream: names.eventsStream, durable: names.eventLogConsumer, ackWaitMs });
}

/** Messages of the consumer not yet delivered, or null when it cannot be asked. */
export async function consumerLag(jsm: JetStreamManager, names: NatsNames): Promise<number | null> {
  return (await durableConsumerInfo(jsm, names.eventsStream, names.eventLogConsumer))?.num_pending ?? null;
}
