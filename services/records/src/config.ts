/**
 * The records service's settings: the only place that reads the environment.
 */
import { commonConfig, envInt, envOptionalEnum, envPort, envUrl, loadConfig, parseConfig } from '@reelbase/lib-platform';

/** Test-only fault switches (docs/architecture.md, "The write path and its events"). */
export const RECORDS_FAULTS = ['crash_after_commit', 'crash_after_publish'] as const;
export type RecordsFault = (typeof RECORDS_FAULTS)[number];

/** Every variable records reads, with its default. */
export const recordsConfigShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its tables in its own schema, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** Port of the service's internal gRPC API. */
  GRPC_PORT: envPort(50052),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9102),
  /** How often the relay looks for outbox rows nobody nudged it about (left over by a crash). */
  OUTBOX_POLL_MS: envInt(500, 10, 60_000),
  /**
   * Largest event (JSON bytes) a write may produce; larger writes are refused with 413 before
   * they commit. The NATS server's max_payload (minus headroom) lowers it further.
   */
  MAX_EVENT_BYTES: envInt(900_000, 1024, 64 * 1024 * 1024),
  /**
   * Longest a query statement (POST /entities/{Type}/query) may run before PostgreSQL cancels it
   * and the caller gets 503 `query_timeout`. Keep it below the gateway's RPC_DEADLINE_MS (5000),
   * so the caller hears why instead of a deadline.
   */
  QUERY_TIMEOUT_MS: envInt(4000, 1, 60_000),
  /**
   * Connections of the writes pool (docs/architecture.md, "Reaching PostgreSQL"): every write's
   * transaction, the outbox relay and the migrations (at least 2: the migration lock holds one).
   */
  WRITE_POOL_MAX: envInt(10, 2, 100),
  /** Connections of the short reads' pool: single records, work views, links, share links, site and sync lookups. */
  READ_POOL_MAX: envInt(4, 1, 100),
  /** Longest a short read may run before PostgreSQL cancels it (503 `unavailable`). */
  READ_TIMEOUT_MS: envInt(10_000, 1, 60_000),
  /** Connections of the long reads' pool queries and summaries run on, apart from the writes and short reads. */
  QUERY_POOL_MAX: envInt(5, 1, 100),
  /**
   * Summaries (POST /entities/{Type}/summarize) running at once on the query pool; more wait in
   * line (up to QUERY_TIMEOUT_MS, 20 at most), then 503 `busy`. Kept below QUERY_POOL_MAX, so
   * long aggregates never take every connection short queries and single reads need.
   */
  SUMMARY_CONCURRENCY: envInt(2, 1, 100),
  /**
   * scrypt N of share-link passwords (docs/review.md), a power of two. Every guest request on a
   * protected link verifies it once, so it is lower than auth's login cost; tests lower it further.
   */
  SHARE_PASSWORD_SCRYPT_COST: envInt(16_384, 2, 1 << 20).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
  /** Connections of the farm's pool (claims, leases and job changes; docs/farm.md). */
  FARM_POOL_MAX: envInt(10, 1, 100),
  /** How often the farm sweeper finalises expired leases (docs/farm.md, "Leases"). */
  FARM_SWEEP_MS: envInt(1000, 50, 600_000),
  /**
   * How often a replica returns site sync states whose lease ran out to the queue (or to failed at
   * the last attempt) with their events, instead of waiting for the next claim (docs/sitesync.md).
   */
  SITESYNC_SWEEP_MS: envInt(5000, 50, 3_600_000),
  /** How often expired idempotency keys are deleted (docs/api-notes.md, "Idempotent retries"). */
  IDEMPOTENCY_SWEEP_MS: envInt(600_000, 1000, 86_400_000),
  /** Kills the process at a chosen point of the write path, to prove crash recovery. Never set in production. */
  RECORDS_FAULT: envOptionalEnum(RECORDS_FAULTS),
};

export type RecordsConfig = ReturnType<typeof parseRecordsConfig>;

/** Parses `env`; throws a ConfigError listing every problem. */
export function parseRecordsConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(recordsConfigShape, env);
}

/** Reads the process environment; prints every problem and exits 78 when it is invalid. */
export function loadRecordsConfig(): RecordsConfig {
  return loadConfig('records', recordsConfigShape, process.env);
}
