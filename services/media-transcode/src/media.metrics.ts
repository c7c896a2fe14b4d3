/**
 * media-transcode's own metrics, registered on the service registry (docs/media.md, "Metrics").
 */
import type { Metrics } from '@reelbase/lib-platform';

type Gauge = ReturnType<Metrics['gauge']>;
type Histogram = ReturnType<Metrics['histogram']>;

/** Buckets of a transcode step, from a thumbnail (tenths of a second) to a long proxy (an hour). */
const TRANSCODE_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export interface ApiMetrics {
  /** Bytes of originals received. */
  uploadBytes: ReturnType<Metrics['counter']>;
  /** Uploads by outcome (stored, too_large, unavailable, ...). */
  uploads: ReturnType<Metrics['counter']>;
  /** Jobs published by the sweeper, by why (unpublished, stalled). */
  swept: ReturnType<Metrics['counter']>;
}

export function createApiMetrics(metrics: Metrics): ApiMetrics {
  return {
    uploadBytes: metrics.counter('media_upload_bytes_total', 'Bytes of reviewable originals received'),
    uploads: metrics.counter('media_uploads_total', 'Reviewable uploads by outcome', ['outcome']),
    swept: metrics.counter('media_jobs_swept_total', 'Transcode jobs published by the sweeper'),
  };
}

export interface WorkerMetrics {
  /** Messages of the TRANSCODE consumer not yet delivered plus delivered and not acknowledged. */
  queueLag: Gauge;
  /** Age in seconds of the job a worker just picked up (upload → start). */
  queueWait: Histogram;
  /** Seconds per step (probe, thumbnail, proxy, job) by kind (video, image, unknown) and outcome (ok, failed). */
  transcodeSeconds: Histogram;
  /** Attempts started, by outcome (done, failed, retry, interrupted, skipped). */
  attempts: ReturnType<Metrics['counter']>;
}

export function createWorkerMetrics(metrics: Metrics): WorkerMetrics {
  return {
    queueLag: metrics.gauge('media_transcode_queue_lag', 'TRANSCODE jobs waiting or in progress (consumer num_pending + num_ack_pending)'),
    queueWait: metrics.histogram('media_transcode_queue_wait_seconds', 'Time from upload to the start of an attempt', [], TRANSCODE_BUCKETS),
    transcodeSeconds: metrics.histogram(
      'media_transcode_seconds',
      'Transcode step duration by step, kind and outcome',
      ['step', 'kind', 'outcome'],
      TRANSCODE_BUCKETS,
    ),
    attempts: metrics.counter('media_transcode_attempts_total', 'Transcode attempts by outcome', ['outcome']),
  };
}
