/**
 * The check every service's start test makes: a start that fails half-way (NATS unreachable,
 * after the pool opened and the migrations ran) must reject and leave no connection open.
 */
import { createLogger, openOrm, type Logger, type RunningService } from '@reelbase/lib-platform';
import { createTestDatabase } from './database.js';
import { freePort } from './ports.js';
import { TEST_INTERNAL_AUTH_SECRET } from './secrets.js';

/** The settings of a start whose NATS address nothing listens on. */
export type UnreachableNatsEnv = {
  INTERNAL_AUTH_SECRET: string;
  DATABASE_URL: string;
  NATS_URL: string;
  GRPC_PORT: string;
  HTTP_PORT: string;
  LOG_LEVEL: string;
};

export interface FailedStart {
  /** What the start rejected with; undefined when it started after all (then it was stopped). */
  error: unknown;
  /** Connections still open on the database under the service's application name. */
  connections: number;
  /** Tables in the service's schema: how far the start got before it failed. */
  tables: number;
}

/**
 * Starts the service on a throwaway database with NATS unreachable, waits for the start to
 * settle, and reports what it left behind as seen from another pool on the same database.
 * `service` is both the pool's application name and the service's schema.
 */
export async function startWithNatsUnreachable(
  service: string,
  start: (env: UnreachableNatsEnv, logger: Logger) => Promise<RunningService>,
): Promise<FailedStart> {
  const db = await createTestDatabase();
  try {
    const logger = createLogger(service, 'silent');
    const closed = await freePort('127.0.0.1');
    const env: UnreachableNatsEnv = {
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      DATABASE_URL: db.url,
      NATS_URL: `nats://127.0.0.1:${closed}`,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
    };
    let error: unknown;
    try {
      const running = await start(env, logger);
      await running.stop();
    } catch (err) {
      error = err;
    }
    const probe = await openOrm({ clientUrl: db.url, schema: 'probe', entities: [], migrations: [], logger });
    try {
      const conn = probe.em.getConnection();
      const open = await conn.execute<{ n: number }[]>(
        'select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ?',
        [service],
      );
      const tables = await conn.execute<{ n: number }[]>('select count(*)::int as n from information_schema.tables where table_schema = ?', [service]);
      return { error, connections: open[0]!.n, tables: tables[0]!.n };
    } finally {
      await probe.close(true);
    }
  } finally {
    await db.drop();
  }
}
