/**
 * NATS connection and JetStream stream set-up. Connections reconnect forever; the first
 * connect is bounded so a service with NATS down fails its start-up quickly and visibly.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { Logger } from '../logger.js';
import type { NatsNames } from './subjects.js';

export type { NatsConnection } from '@nats-io/transport-node';

/** Connects to `url`, logging disconnects and reconnects. */
export async function connectNats(url: string, name: string, logger: Logger, timeoutMs = 3000): Promise<NatsConnection> {
  const nc = await connect({
    servers: url,
    name,
    timeout: timeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: false,
    // Capturing a stack trace for every request (each JetStream publish is one) costs more
    // than the publish itself on the hot path; failures are logged with their own context.
    noAsyncTraces: true,
  });
  logger.info({ server: nc.getServer() }, 'connected to NATS');
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        logger.warn({ nats: s.type }, 'NATS connection status');
      }
    }
  })();
  return nc;
}

/** Creates or updates the EVENTS stream. Idempotent; safe from every service at start-up. */
export function ensureEventsStream(nc: NatsConnection, names: NatsNames): Promise<JetStreamManager> {
  return ensureStream(nc, {
    name: names.eventsStream,
    subjects: [names.eventsSubjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    // Consumers are durable; the log itself is kept by the events service.
    max_age: nanos(7 * 24 * 3600 * 1000),
    // Re-publishes of the same outbox row within this window are dropped (Nats-Msg-Id).
    duplicate_window: nanos(10 * 60 * 1000),
  });
}

/**
 * Creates or updates the TRANSCODE work-queue stream (each job is delivered to one worker and
 * removed once acknowledged). Idempotent; the media api and every worker call it at start-up.
 */
export function ensureTranscodeStream(nc: NatsConnection, names: NatsNames): Promise<JetStreamManager> {
  return ensureStream(nc, {
    name: names.transcodeStream,
    subjects: [names.transcodeSubject],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // A job nobody picked up in a week is stale; the media api's sweeper re-publishes what is unfinished.
    max_age: nanos(7 * 24 * 3600 * 1000),
    // A job published twice (the sweeper racing the upload) is stored once (Nats-Msg-Id = job id).
    duplicate_window: nanos(10 * 60 * 1000),
  });
}

/** Creates the stream `config.name`, or brings it to `config` when it exists; safe when services race. */
async function ensureStream(nc: NatsConnection, config: Partial<StreamConfig> & { name: string }): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!/stream not found/i.test(String((err as Error).message))) throw err;
    try {
      await jsm.streams.add(config);
    } catch (addErr) {
      // Another service created it between our info and add.
      if (!/already in use|exists/i.test(String((addErr as Error).message))) throw addErr;
    }
  }
  return jsm;
}
