/**
 * The media-transcode environment, read and validated once at start-up. One package, two roles
 * (docs/media.md): the api (`dist/main.js`) and the worker (`dist/worker.main.js`), each with
 * its own shape; the settings both need are shared.
 */
import { z } from 'zod';
import { commonConfig, envAddr, envInt, envOptionalEnum, envPort, envString, envUrl, loadConfig, mediaPolicy, parseConfig } from '@reelbase/lib-platform';

const GIB = 1024 * 1024 * 1024;

/** Settings of both roles. */
const sharedShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its jobs and attempts in schema `media`, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** The records service: Versions are checked and Representations written there. */
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  /** Deadline of each call to records. */
  RPC_DEADLINE_MS: envInt(5_000, 100, 120_000),
  /** The S3-compatible object store (MinIO, AWS S3, or the local stand-in under `npm start`). */
  S3_ENDPOINT: envUrl(undefined, ['http', 'https']),
  /** Access key of S3_ENDPOINT (required). */
  S3_ACCESS_KEY: z.string({ error: 'is required: the access key of S3_ENDPOINT' }).min(1),
  /** Secret key of S3_ENDPOINT (required). */
  S3_SECRET_KEY: z.string({ error: 'is required: the secret key of S3_ENDPOINT' }).min(1),
  /** Bucket of every media object; created at start-up when missing. */
  S3_BUCKET: envString('reelbase-media'),
  /** Region the object store signs requests for. */
  S3_REGION: envString('us-east-1'),
  /**
   * Size of each multipart upload part; an upload holds two parts in memory at once (S3 allows
   * 10,000 parts, so 5 MiB parts carry objects up to 48 GiB, well above MEDIA_MAX_BYTES).
   */
  S3_PART_BYTES: envInt(5 * 1024 * 1024, 5 * 1024 * 1024, 512 * 1024 * 1024),
  /**
   * Milliseconds one object-store request may take to answer, or an upload may wait for the store
   * to take more bytes (or to confirm the last ones), before the store counts as down.
   */
  S3_TIMEOUT_MS: envInt(10_000, 100, 600_000),
};

/** Every setting of the media api with its default. */
export const mediaApiConfigShape = {
  ...sharedShape,
  /** Port of the internal gRPC API (upload, reviewable status, media reads). */
  GRPC_PORT: envPort(50055),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9105),
  /** Largest original accepted (8 GiB); the gateway refuses a larger Content-Length with 413 before reading. */
  MEDIA_MAX_BYTES: envInt(mediaPolicy.MEDIA_MAX_BYTES_DEFAULT, 1, 64 * GIB),
  /** An upload stream that sends nothing for this long is cut off (the total time is not bounded). */
  UPLOAD_IDLE_MS: envInt(60_000, 100, 3_600_000),
  /** Bytes per message of a media read. */
  MEDIA_READ_CHUNK_BYTES: envInt(256 * 1024, 16 * 1024, 4 * 1024 * 1024),
  /** How often the sweeper publishes jobs whose first publish failed and re-queues stalled ones. */
  SWEEP_INTERVAL_MS: envInt(5_000, 50, 600_000),
  /** A job unpublished this long after its upload is published by the sweeper. */
  SWEEP_GRACE_MS: envInt(10_000, 0, 3_600_000),
  /** A queued or processing job without progress for this long is published again (stream lost, message dropped); so is a finished one whose Representation copy is behind. */
  STALE_JOB_MS: envInt(30 * 60_000, 1_000, 7 * 24 * 3_600_000),
};

/** Every setting of the media worker with its default. */
export const mediaWorkerConfigShape = {
  ...sharedShape,
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9106),
  /** The ffmpeg binary (Debian's `ffmpeg` package; looked up on PATH by default). */
  FFMPEG_PATH: envString('ffmpeg'),
  /** The ffprobe binary (same package). */
  FFPROBE_PATH: envString('ffprobe'),
  /**
   * Wall-clock limit of the proxy encode; past it ffmpeg is killed and the attempt fails. The probe
   * and the thumbnail get at most 2 minutes of it each.
   */
  TRANSCODE_TIMEOUT_MS: envInt(60 * 60_000, 1_000, 6 * 3_600_000),
  /** CPUs one ffmpeg run may keep busy: the decoder and filter threads, and libx264 1.5 threads per CPU (docs/media.md). */
  TRANSCODE_THREADS: envInt(2, 1, 64),
  /** Sources claiming a longer duration are refused (a header claiming hours must not occupy a worker for hours). */
  TRANSCODE_MAX_DURATION_S: envInt(4 * 3600, 1, 48 * 3600),
  /** How long JetStream waits for an ack or heartbeat before redelivering a job to another worker. */
  TRANSCODE_ACK_WAIT_MS: envInt(30_000, 500, 3_600_000),
  /** Attempts per job (a worker that dies counts as one) before it ends `failed`. */
  TRANSCODE_MAX_ATTEMPTS: envInt(2, 1, 20),
  /** Delay before a failed attempt is tried again. */
  TRANSCODE_RETRY_DELAY_MS: envInt(2_000, 0, 3_600_000),
  /** How often the queue-lag gauge is refreshed. */
  TRANSCODE_LAG_REFRESH_MS: envInt(5_000, 100, 600_000),
  /** Scratch space for originals and outputs during a job (the OS temp dir by default). */
  TRANSCODE_TMP_DIR: z.string().optional(),
  /** Test-only fault switch: `slow_proxy` makes every proxy encode run at real-time speed (`-re`), so a test can stop a worker mid-encode. */
  TRANSCODE_FAULT: envOptionalEnum(['slow_proxy'] as const),
};

export type MediaApiConfig = ReturnType<typeof parseMediaApiConfig>;
export type MediaWorkerConfig = ReturnType<typeof parseMediaWorkerConfig>;

/** Parses `env` for the api (throws ConfigError with every problem); used by tests. */
export function parseMediaApiConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(mediaApiConfigShape, env);
}

/** Parses `env` for the worker (throws ConfigError with every problem); used by tests. */
export function parseMediaWorkerConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(mediaWorkerConfigShape, env);
}

/** Reads `process.env` for the api; prints every problem and exits 78 when invalid. */
export function loadMediaApiConfig(): MediaApiConfig {
  return loadConfig('media-transcode', mediaApiConfigShape);
}

/** Reads `process.env` for the worker; prints every problem and exits 78 when invalid. */
export function loadMediaWorkerConfig(): MediaWorkerConfig {
  return loadConfig('media-worker', mediaWorkerConfigShape);
}
