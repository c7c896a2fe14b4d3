/**
 * The events service's environment, read and validated once at start-up.
 */
import { commonConfig, envInt, envPort, envUrl, loadConfig, parseConfig } from '@reelbase/lib-platform';

/** Every setting of the events service with its default. */
export const eventsConfigShape = {
  ...commonConfig,
  /** PostgreSQL; the service keeps its tables in its own schema, migrated at start-up. */
  DATABASE_URL: envUrl('postgres://postgres@127.0.0.1:5432/reelbase', ['postgres', 'postgresql']),
  /** Port of the service's internal gRPC API. */
  GRPC_PORT: envPort(50053),
  /** The ops port: /healthz, /readyz and /metrics. */
  HTTP_PORT: envPort(9103),
  /** Largest number of already-waiting messages appended in one transaction. */
  EVENTS_BATCH_MAX: envInt(256, 1, 10_000),
  /** How long JetStream waits for an ack before redelivering a message to the writer. */
  EVENTS_ACK_WAIT_MS: envInt(30_000, 1_000, 3_600_000),
  /** How often a standby replica tries to become the writer. */
  EVENTS_LOCK_RETRY_MS: envInt(1_000, 50, 60_000),
  /** How often the consumer-lag gauge is refreshed. */
  EVENTS_LAG_REFRESH_MS: envInt(5_000, 100, 600_000),
  /**
   * Byte budget of one ListEvents page (at least one event is always sent). Kept well under
   * the 16 MiB a gRPC client accepts, with room for one event of the largest size records allows.
   */
  EVENTS_PAGE_MAX_BYTES: envInt(4 * 1024 * 1024, 1, 8 * 1024 * 1024),
};

export type EventsConfig = ReturnType<typeof parseEventsConfig>;

/** Parses `env` (throws ConfigError with every problem); used by tests. */
export function parseEventsConfig(env: Record<string, string | undefined> = process.env) {
  return parseConfig(eventsConfigShape, env);
}

/** Reads `process.env`; prints every problem and exits 78 when invalid. */
export function loadEventsConfig(): EventsConfig {
  return loadConfig('events', eventsConfigShape);
}
