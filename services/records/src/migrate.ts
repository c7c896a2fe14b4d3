/**
 * Brings the `records` schema up to date without starting the service (tools that need the
 * exact tables, such as the benchmarks measuring raw PostgreSQL against them).
 */
import { createLogger, openOrm, type Logger } from '@reelbase/lib-platform';
import { RECORDS_MIGRATIONS } from './migrations.js';
import { OutboxEntitySchema } from './kernel/store/outbox.entity.js';
import { RecordEntitySchema } from './kernel/store/record.entity.js';

/** Applies every pending records migration to `databaseUrl`, then closes its pool. */
export async function migrateRecordsSchema(databaseUrl: string, logger: Logger = createLogger('records-migrate', 'warn')): Promise<void> {
  const orm = await openOrm({
    clientUrl: databaseUrl,
    schema: 'records',
    entities: [RecordEntitySchema, OutboxEntitySchema],
    migrations: RECORDS_MIGRATIONS,
    logger,
  });
  await orm.close(true);
}
