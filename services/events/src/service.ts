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
  pingNats,
  Readiness,
  startOpsServer,
  withResources,
  type Logger,
  type RunningService,
  ormPoolSample,
} from '@reelbase/lib-platform';
import type { EventsConfig } from './config.js';
import { EVENTS_SERVICE_NAME, eventsHandlers } from './grpc/events.handler.js';
import { LogWriter } from './log/log.writer.js';
import { createWriterMetrics } from './log/writer.metrics.js';
import { EventLogEntrySchema } from './store/event-log.entity.js';
import { EventLogRepository } from './store/event-log.repository.js';
import { EVENTS_MIGRATIONS } from './store/migrations.js';
import { WriterSession } from './store/writer.session.js';

/** A running events service. */
export interface RunningEvents extends RunningService {
  grpcPort: number;
  /** The log writer (exposed so tests can see which replica writes). */
  writer: LogWriter;
}

/** Starts every part of the service; rejects (after cleaning up) if a dependency is missing. */
export function startEvents(config: EventsConfig, logger: Logger = createLogger('events', config.LOG_LEVEL)): Promise<RunningEvents> {
  const metrics = new Metrics('events');
  const names = natsNames(config.NATS_PREFIX);
  return withResources(
    logger,
    async (resources) => {
      const orm = await openOrm({
        clientUrl: config.DATABASE_URL,
        schema: 'events',
        entities: [EventLogEntrySchema],
        migrations: EVENTS_MIGRATIONS,
        logger,
      });
      resources.defer('postgres', () => orm.close());
      const nc = await connectNats(config.NATS_URL, 'events', logger);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      // records may start later; the stream must exist before the consumer.
      const jsm = await ensureEventsStream(nc, names);

      const writer = new LogWriter({
        openSession: () => WriterSession.tryOpen(orm),
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

      const grpc = new GrpcServer({ logger, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET });
      grpc.add<eventsv1.EventsServiceServer>(
        EVENTS_SERVICE_NAME,
        eventsv1.EventsServiceService,
        eventsHandlers({ log: new EventLogRepository(orm, { pageMaxBytes: config.EVENTS_PAGE_MAX_BYTES }) }),
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      const readiness = new Readiness().add('postgres', () => pingDb(orm)).add('nats', () => pingNats(nc));
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
      resources.defer('ops', () => ops.close());

      resources.startLoop('log writer', writer);

      // Closed in reverse: the writer first, so its last batch commits while NATS and the pool are up.
      return { grpcPort, httpPort: ops.port, writer, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
