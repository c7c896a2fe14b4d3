/**
 * Starts a media worker: the pull loop on the TRANSCODE consumer, the queue-lag gauge and the
 * ops server. Used by worker.main.ts and by tests in-process.
 */
import { hostname } from 'node:os';
import { jetstream } from '@nats-io/jetstream';
import {
  connectNats,
  createLogger,
  ensureTranscodeStream,
  IntervalLoop,
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
import type { MediaWorkerConfig } from './config.js';
import { createWorkerMetrics } from './media.metrics.js';
import { ObjectStore } from './objects/object.store.js';
import { MediaRecords, mediaRecordsClient } from './records/records.client.js';
import { JobSchema } from './store/job.entity.js';
import { JobRepository } from './store/job.repository.js';
import { MEDIA_MIGRATIONS } from './store/migrations.js';
import { FfmpegTools } from './transcode/ffmpeg.runner.js';
import { JobProcessor } from './worker/job.processor.js';
import { ensureTranscodeConsumer, transcodeBacklog } from './worker/transcode.consumer.js';
import { WorkerLoop } from './worker/worker.loop.js';

/** A running worker. */
export interface RunningMediaWorker extends RunningService {
  workerId: string;
}

/** Starts the worker; rejects (after cleaning up) if a dependency is missing. */
export function startMediaWorker(config: MediaWorkerConfig, logger: Logger = createLogger('media-worker', config.LOG_LEVEL)): Promise<RunningMediaWorker> {
  const metrics = new Metrics('media_worker');
  const workerMetrics = createWorkerMetrics(metrics);
  const names = natsNames(config.NATS_PREFIX);
  const workerId = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  return withResources(
    logger,
    async (resources) => {
      const orm = await openOrm({ clientUrl: config.DATABASE_URL, schema: 'media', entities: [JobSchema], migrations: MEDIA_MIGRATIONS, logger, poolMax: 4 });
      resources.defer('postgres', () => orm.close());
      const nc = await connectNats(config.NATS_URL, 'media-worker', logger);
      resources.defer('nats', () => nc.drain());
      metrics.watchNats(nc);
      metrics.watchPool('main', ormPoolSample(orm));
      const jsm = await ensureTranscodeStream(nc, names);
      await ensureTranscodeConsumer(jsm, names, config.TRANSCODE_ACK_WAIT_MS);
      const consumer = await jetstream(nc).consumers.get(names.transcodeStream, names.transcodeConsumer);
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

      const readiness = new Readiness()
        .add('postgres', () => pingDb(orm))
        .add('nats', () => pingNats(nc))
        .add('object store', () => store.ping());
      const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
      resources.defer('ops', () => ops.close());

      const refreshLag = async () => {
        const n = await transcodeBacklog(jsm, names);
        if (n !== null) workerMetrics.queueLag.set(n);
      };
      resources.startLoop(
        'lag gauge',
        new IntervalLoop(config.TRANSCODE_LAG_REFRESH_MS, refreshLag, (err) => logger.debug({ err }, 'transcode queue lag not read'), { immediate: true }),
      );

      const processor = new JobProcessor({
        store,
        records,
        jobs: new JobRepository(orm),
        logger,
        metrics: workerMetrics,
        workerId,
        tools: new FfmpegTools({ ffmpeg: config.FFMPEG_PATH, ffprobe: config.FFPROBE_PATH }),
        timeoutMs: config.TRANSCODE_TIMEOUT_MS,
        threads: config.TRANSCODE_THREADS,
        maxDurationS: config.TRANSCODE_MAX_DURATION_S,
        ackWaitMs: config.TRANSCODE_ACK_WAIT_MS,
        maxAttempts: config.TRANSCODE_MAX_ATTEMPTS,
        retryDelayMs: config.TRANSCODE_RETRY_DELAY_MS,
        tmpDir: config.TRANSCODE_TMP_DIR,
        slowProxy: config.TRANSCODE_FAULT === 'slow_proxy',
      });
      resources.startLoop('worker loop', new WorkerLoop(consumer, processor, logger));

      return { httpPort: ops.port, workerId, stop: () => resources.closeAll() };
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}
