/**
 * The workers' shared durable pull consumer on the TRANSCODE work queue (lib-platform's durable
 * consumer set-up: a job not acknowledged nor marked in progress within `ackWaitMs` goes to
 * another worker; attempts are counted by the workers themselves, in media.attempts, which end
 * a job `failed`).
 */
import type { JetStreamManager } from '@nats-io/jetstream';
import { durableConsumerInfo, ensureDurableConsumer, type NatsNames } from '@reelbase/lib-platform';

/** Creates the durable consumer, or brings its ack wait to `ackWaitMs`. Safe from every worker. */
export function ensureTranscodeConsumer(jsm: JetStreamManager, names: NatsNames, ackWaitMs: number): Promise<void> {
  return ensureDurableConsumer(jsm, { stream: names.transcodeStream, durable: names.transcodeConsumer, ackWaitMs });
}

/** Jobs waiting plus jobs delivered and not yet acknowledged; null when the server cannot be asked. */
export async function transcodeBacklog(jsm: JetStreamManager, names: NatsNames): Promise<number | null> {
  const info = await durableConsumerInfo(jsm, names.transcodeStream, names.transcodeConsumer);
  return info ? info.num_pending + info.num_ack_pending : null;
}
