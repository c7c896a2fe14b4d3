/**
 * Starts the events service: the event-log writer (one active across replicas), the gRPC
 * reads, and the ops server. Used by main.ts and by tests in-process.
 */
import { eventsv1 } from '@reelbase/proto';
import {
  connectNats,
  createLogger,
  ensureEventsStream,
  GrpcServer,
  Metrics,
  natsNames,
  openOrm,
  pingDb,
  Readiness,
  startOpsServer,
  type Logger,
} from '@reelbase/lib-platform';
import type { EventsConfig } from './config.js';
import { EVENTS_SERVICE_NAME, EventsHandler } from './grpc/events.handler.js';
import { LogWriter } from './log/log.writer.js';
import { createWriterMetrics } from './log/writer.metrics.js';
import { EventLogEntrySchema } from './store/event-log.entity.js';
import { EventLogRepository } from './store/event-log.repository.js';
import { migrations } from './store/migrations.js';

export interface EventsService {
  grpcPort: number;
  httpPort: number;
  /** The log writer (exposed so tests can see which replica writes). */
  writer: LogWriter;
  /** Stops consuming (finishing the batch in flight), closes the servers, drains NATS, closes the pool. */
  stop(): Promise<void>;
}

/** Starts every part of the service; rejects (after cleaning up) if a dependency is missing. */
export async function startEvents(config: EventsConfig, logger: Logger = createLogger('events', config.LOG_LEVEL)): Promise<EventsService> {
  const metrics = new Metrics('events');
  const names = natsNames(config.NATS_PREFIX);
  const orm = await openOrm({
    clientUrl: config.DATABASE_URL,
    schema: 'events',
    entities: [EventLogEntrySchema],
    migrations,
    logger,
  });
  const cleanup: (() => Promise<unknown>)[] = [() => orm.close()];
  let undoing: Promise<void> | null = null;
  const undo = () =>
    (undoing ??= (async () => {
      for (const fn of [...cleanup].reverse()) await fn().catch((err) => logger.warn({ err }, 'stop step failed'));
    })());
  try {
    const nc = await connectNats(config.NATS_URL, 'events', logger);
    cleanup.push(() => nc.drain());
    // records may start later; the stream must exist before the consumer.
    const jsm = await ensureEventsStream(nc, names);

    const writer = new LogWriter({
      orm,
      nc,
      jsm,
      names,
      logger,
      metrics: createWriterMetrics(metrics),
      batchMax: config.EVENTS_BATCH_MAX,
      ackWaitMs: config.EVENTS_ACK_WAIT_MS,
      lockRetryMs: config.EVENTS_LOCK_RETRY_MS,
      lagRefreshMs: config.EVENTS_LAG_REFRESH_MS,
    });

    const grpc = new GrpcServer({ logger, metrics });
    grpc.add<eventsv1.EventsServiceServer>(EVENTS_SERVICE_NAME, eventsv1.EventsServiceService, new EventsHandler(new EventLogRepository(orm, { pageMaxBytes: config.EVENTS_PAGE_MAX_BYTES })));
    const grpcPort = await grpc.listen(config.GRPC_PORT);
    cleanup.push(() => grpc.close());

    const readiness = new Readiness()
      .add('postgres', () => pingDb(orm))
      .add('nats', async () => {
        if (nc.isClosed()) throw new Error('connection closed');
        await nc.flush();
      });
    const ops = await startOpsServer({ port: config.HTTP_PORT, metrics, readiness, logger });
    cleanup.push(() => ops.close());

    writer.start();
    cleanup.push(() => writer.stop());

    return {
      grpcPort,
      httpPort: ops.port,
      writer,
      // Reverse order: the writer first, so its last batch commits while NATS and the pool are up.
      stop: undo,
    };
  } catch (err) {
    await undo();
    throw err;
  }
}
