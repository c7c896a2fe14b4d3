/**
 * The workers' shared durable pull consumer on the TRANSCODE work queue.
 */
import { AckPolicy, DeliverPolicy, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { NatsNames } from '@reelbase/lib-platform';

const CONSUMER_NOT_FOUND = 10014;

/**
 * Creates the durable consumer (explicit acks; a job not acknowledged nor marked in progress
 * within `ackWaitMs` goes to another worker), or brings its ack wait to `ackWaitMs`. Safe from
 * every worker.
 */
export async function ensureTranscodeConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  const ackWait = nanos(ackWaitMs);
  try {
    const info = await jsm.consumers.info(names.transcodeStream, names.transcodeConsumer);
    if (info.config.ack_wait !== ackWait) await jsm.consumers.update(names.transcodeStream, names.transcodeConsumer, { ack_wait: ackWait });
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === CONSUMER_NOT_FOUND)) throw err;
  }
  try {
    await jsm.consumers.add(names.transcodeStream, {
      durable_name: names.transcodeConsumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      // Attempts are counted by the workers themselves (media.attempts), which end a job `failed`.
      max_deliver: -1,
      max_ack_pending: 10_000,
    });
  } catch (err) {
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
  }
}

/** Jobs waiting plus jobs delivered and not yet acknowledged; null when the server cannot be asked. */
export async function transcodeBacklog(jsm: JetStreamManager, names: NatsNames): Promise<number | null> {
  try {
    const info = await jsm.consumers.info(names.transcodeStream, names.transcodeConsumer);
    return info.num_pending + info.num_ack_pending;
  } catch {
    return null;
  }
}
