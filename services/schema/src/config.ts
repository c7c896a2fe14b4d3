/**
 * The schema service's settings: the only place that reads the environment.
 */
import {
  commonConfig,
  envAddr,
  envInt,
  envOptionalEnum,
  envPort,
  envSecretsKey,
  envSecretsKeysPrevious,
  envUrl,
  loadConfig,
  parseConfig,
} from '@reelbase/lib-platform';

/** Test-only fault switches (docs/architecture.md, "The schema service"). */
export const SCHEMA_FAULTS = ['crash_after_journal'] as const;
export type SchemaFault = (typeof SCHEMA_FAULTS)[number];

/** Every variable the schema service reads, with its default. */
export const schemaConfigShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its tables in its own schema, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** Port of the service's internal gRPC API. */
  GRPC_PORT: envPort(50054),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9104),
  /** records' gRPC address (host:port). */
  RECORDS_ADDR: envAddr('127.0.0.1:50052'),
  /** The notifier's gRPC address (host:port): webhook actions and scheduled webhooks are delivered by it. */
  NOTIFIER_ADDR: envAddr('127.0.0.1:50056'),
  /** Key custom actions' and schedules' webhook secrets are encrypted with at rest: 32 bytes in base64 (required; `npm start` keeps one in its data directory). docs/operations.md, "The secrets key". */
  SECRETS_KEY: envSecretsKey(),
  /** Earlier SECRETS_KEYs (comma-separated) that still decrypt, while a key rotation re-encrypts at start-up. */
  SECRETS_KEY_PREVIOUS: envSecretsKeysPrevious(),
  /** How often the relay looks for outbox rows nobody nudged it about (left over by a crash). */
  OUTBOX_POLL_MS: envInt(500, 10, 60_000),
  /**
   * How often the service re-checks that records holds the current schema and that no rename
   * is left unfinished (after records was unreachable, or another replica crashed mid-rename).
   */
  SCHEMA_SYNC_MS: envInt(5000, 100, 600_000),
  /**
   * How often each replica looks for due schedules (docs/scheduler.md): an occurrence runs within
   * about this long of its time (well within 5 s at the default).
   */
  SCHEDULER_TICK_MS: envInt(1000, 50, 60_000),
  /** Most schedules the studio may have (docs/scheduler.md, "Limits"); one more is 409 `limit_reached`. */
  SCHEDULER_MAX_SCHEDULES: envInt(1000, 1, 100_000),
  /** Runs kept per schedule, newest first; older ones are pruned (docs/scheduler.md, "Limits"). */
  SCHEDULER_RUNS_KEPT: envInt(1000, 1, 1_000_000),
  /** Days a run is kept; older runs are pruned whatever their number (docs/scheduler.md, "Limits"). */
  SCHEDULER_RUN_RETENTION_DAYS: envInt(90, 1, 36_500),
  /** How often runs past SCHEDULER_RUNS_KEPT or SCHEDULER_RUN_RETENTION_DAYS are pruned (one replica at a time). */
  SCHEDULER_PRUNE_MS: envInt(3_600_000, 1000, 86_400_000),
  /** Kills the process at a chosen point of a rename, to prove recovery. Never set in production. */
  SCHEMA_FAULT: envOptionalEnum(SCHEMA_FAULTS),
};

export type SchemaConfig = ReturnType<typeof parseSchemaConfig>;

/** Parses `env`; throws a ConfigError listing every problem. */
export function parseSchemaConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(schemaConfigShape, env);
}

/** Reads the process environment; prints every problem and exits 78 when it is invalid. */
export function loadSchemaConfig(): SchemaConfig {
  return loadConfig('schema', schemaConfigShape, process.env);
}
