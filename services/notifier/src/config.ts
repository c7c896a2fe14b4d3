/**
 * The notifier's environment, read and validated once at start-up.
 */
import {
  commonConfig,
  envAddr,
  envBool,
  envInt,
  envPort,
  envSecretsKey,
  envSecretsKeysPrevious,
  envUrl,
  loadConfig,
  parseConfig,
} from '@reelbase/lib-platform';

/** Every setting of the notifier with its default. */
export const notifierConfigShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its tables in its own schema, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** Port of the service's internal gRPC API. */
  GRPC_PORT: envPort(50056),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9107),
  /**
   * Key webhook secrets are encrypted with at rest: 32 bytes in base64 (required; `npm start`
   * keeps one in its data directory). docs/operations.md, "The secrets key".
   */
  SECRETS_KEY: envSecretsKey(),
  /** Earlier SECRETS_KEYs (comma-separated) that still decrypt, while a key rotation re-encrypts at start-up. */
  SECRETS_KEY_PREVIOUS: envSecretsKeysPrevious(),
  /** events' gRPC address (host:port): the event log the notifier follows. */
  EVENTS_ADDR: envAddr('127.0.0.1:50053'),
  /** Events read from the log per transaction. */
  NOTIFIER_BATCH_MAX: envInt(500, 1, 1000),
  /** How often the log is read when no `live.events` announcement arrives, and how often due retries are looked for. */
  NOTIFIER_POLL_MS: envInt(1000, 10, 60_000),
  /** How long a `live.events` announcement waits before the log is read, so events appended meanwhile share one page. */
  NOTIFIER_COALESCE_MS: envInt(100, 0, 1000),
  /** Attempts in flight at once, across every webhook (each webhook has at most one). */
  WEBHOOK_CONCURRENCY: envInt(16, 1, 1024),
  /** Limit of one attempt: connect, request, answer headers and the first 2 KiB of the answer. */
  WEBHOOK_TIMEOUT_MS: envInt(10_000, 100, 120_000),
  /** First retry delay; each further retry doubles it (capped by WEBHOOK_BACKOFF_MAX_MS), with full jitter. */
  WEBHOOK_BACKOFF_BASE_MS: envInt(1000, 1, 3_600_000),
  /** Longest delay between two attempts of one delivery. */
  WEBHOOK_BACKOFF_MAX_MS: envInt(3_600_000, 1, 24 * 3_600_000),
  /** How long a delivery is retried before it is dead; a webhook failing this long is disabled. */
  WEBHOOK_RETRY_WINDOW_MS: envInt(24 * 3_600_000, 1, 30 * 24 * 3_600_000),
  /** Allows targets on loopback, private, link-local and other internal addresses (development and tests only). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: envBool(false),
  /** Days a delivered delivery is kept in the delivery log (dead ones are kept until retried or their webhook is deleted); 0 keeps everything. */
  WEBHOOK_DELIVERY_RETENTION_DAYS: envInt(30, 0, 3650),
  /** The process's nice value (0-19): background work yields the CPU to the services a write waits on. */
  NOTIFIER_NICE: envInt(10, 0, 19),
  /** How often the delivery log is pruned. */
  WEBHOOK_PRUNE_INTERVAL_MS: envInt(3_600_000, 1000, 7 * 24 * 3_600_000),
};

export type NotifierConfig = ReturnType<typeof parseNotifierConfig>;

/** Parses `env` (throws ConfigError with every problem); used by tests. */
export function parseNotifierConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(notifierConfigShape, env);
}

/** Reads `process.env`; prints every problem and exits 78 when invalid. */
export function loadNotifierConfig(): NotifierConfig {
  return loadConfig('notifier', notifierConfigShape);
}
