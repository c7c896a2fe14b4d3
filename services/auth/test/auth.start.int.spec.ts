/**
 * A start that fails half-way (NATS unreachable, after the pool opened and migrations ran)
 * rejects and leaves nothing open: the shared lifecycle closes what it had opened.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger, openOrm } from '@reelbase/lib-platform';
import { createTestDatabase, freePort, TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import { parseAuthConfig } from '../src/config.js';
import { startAuth } from '../src/service.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

it('closes its pool when NATS is unreachable at start', async () => {
  const logger = createLogger('auth', 'silent');
  const closed = await freePort('127.0.0.1');
  const config = parseAuthConfig({
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    DATABASE_URL: db.url,
    NATS_URL: `nats://127.0.0.1:${closed}`,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  await expect(startAuth(config, logger)).rejects.toThrow();

  // Another pool on the same database sees no connection left by the service (named after its schema).
  const probe = await openOrm({ clientUrl: db.url, schema: 'probe', entities: [], migrations: [], logger });
  try {
    const rows = await probe.em
      .getConnection()
      .execute<{ n: number }[]>('select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = ?', ['auth']);
    expect(rows[0]!.n).toBe(0);
    // It did get as far as the database: the migrations ran.
    const tables = await probe.em
      .getConnection()
      .execute<{ n: number }[]>("select count(*)::int as n from information_schema.tables where table_schema = 'auth'");
    expect(tables[0]!.n).toBeGreaterThan(0);
  } finally {
    await probe.close(true);
  }
});
