/**
 * Starts the media api: gRPC (upload stream, reviewable status, media reads), the job sweeper and
 * the ops server. Used by main.ts and by tests in-process.
 */
import { jetstream } from '@nats-io/jetstream';
import { mediav1 } from '@reelbase/proto';
import {
  connectNats,
  createLogger,
  ensureTranscodeStream,
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
import type { MediaApiConfig } from './config.js';
import { Reviewables } from './domain/reviewables.js';
import { MEDIA_SERVICE_NAME, mediaHandlers } from './grpc/media.handler.js';
import { createApiMetrics } from './media.metrics.js';
import { ObjectStore } from './objects/object.store.js';
import { MediaRecords, mediaRecordsClient } from './records/records.client.js';
import { JobSchema } from './store/job.entity.js';
import { JobRepository } from './store/job.repository.js';
import { MEDIA_MIGRATIONS } from './store/migrations.js';
import { JobPublisher } from './upload/job.publisher.js';
import { ReservationRecovery } from './upload/reservation.recovery.js';
import { UploadFlow } from './upload/upload.flow.js';
import { mediaServiceDefinition } from './grpc/upload.decode.js';

/** A running media api. */
export interface RunningMediaApi extends RunningService {
  grpcPort: number;
  jobs: JobRepository;
  publisher: JobPublisher;
  recovery: ReservationRecovery;
}

/** Starts every part of the api; rejects (after cleaning up) if a dependency is missing. */
export function startMediaApi(config: MediaApiConfig, logger: Logger = createLogger('media-transcode', config.LOG_LEVEL)): Promise<RunningMediaApi> {
  const metrics = new Metrics('media_transcode');
  const apiMetrics = createApiMetrics(metrics);
  const names = natsNames(config.NATS_PREFIX);
  return withResources(
    logger,
    async (resources) => {
      const orm = await openOrm({ clientUrl: config.DATABASE_URL, schema: 'media', entities: [JobSchema], migrations: MEDIA_MIGRATIONS, logger });
      resources.defer('postgres', () => orm.close());
      const nc = await connectNats(config.NATS_URL, 'media-transcode', logger);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      await ensureTranscodeStream(nc, names);
      const store = new ObjectStore(config);
      await store.ensureBucket();
      const recordsClient = mediaRecordsClient({
        address: config.RECORDS_ADDR,
        internalAuthSecret: config.INTERNAL_AUTH_SECRET,
        deadlineMs: config.RPC_DEADLINE_MS,
        metrics,
      });
      resources.defer('records client', () => recordsClient.close());
      const records = new MediaRecords(recordsClient);

      const jobs = new JobRepository(orm);
      // A reservation is surely abandoned once it is older than the records call that follows it could take.
      const recovery = new ReservationRecovery({ jobs, records, store, logger, ageMs: config.SWEEP_GRACE_MS + 2 * config.RPC_DEADLINE_MS });
      const publisher = new JobPublisher({
        js: jetstream(nc),
        names,
        jobs,
        logger,
        sweepIntervalMs: config.SWEEP_INTERVAL_MS,
        graceMs: config.SWEEP_GRACE_MS,
        staleMs: config.STALE_JOB_MS,
        onSwept: () => apiMetrics.swept.inc(),
        beforeSweep: () => recovery.recoverOnce(),
      });
      const uploads = new UploadFlow({
        store,
        records,
        jobs,
        publisher,
        logger,
        maxBytes: config.MEDIA_MAX_BYTES,
        storeStallMs: config.S3_TIMEOUT_MS,
        onBytes: (n) => apiMetrics.uploadBytes.inc(n),
        onOutcome: (outcome) => apiMetrics.uploads.inc({ outcome }),
      });

      const grpc = new GrpcServer({ logger, metrics, internalAuthSecret: config.INTERNAL_AUTH_SECRET, streamIdleMs: config.UPLOAD_IDLE_MS });
      grpc.add<mediav1.MediaServiceServer>(
        MEDIA_SERVICE_NAME,
        mediaServiceDefinition,
        mediaHandlers({ uploads, reviewables: new Reviewables({ jobs, objects: store, records }), readChunkBytes: config.MEDIA_READ_CHUNK_BYTES }),
      );
      const grpcPort = await grpc.listen(config.GRPC_PORT, config.BIND_HOST);
      resources.defer('grpc', () => grpc.close());

      const readiness = new Readiness()
        .add('postgres', () => pingDb(orm))
        .add('nats', () => pingNats(nc))
        .add('object store', () => store.ping());
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
      resources.defer('ops', () => ops.close());

      resources.startLoop('sweeper', publisher);

      return { grpcPort, httpPort: ops.port, jobs, publisher, recovery, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
