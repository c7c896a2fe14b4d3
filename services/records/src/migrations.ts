/**
 * The migrations of schema `records`, applied by openOrm at start-up (see docs/architecture.md,
 * "Service shape"). Each is a hand-written `<what>.migration.ts`; a `name` is stored in
 * `records.mikro_orm_migrations` once applied and never changes.
 */
import type { MigrationObject } from '@mikro-orm/postgresql';
import { RecordsInitialMigration } from './kernel/store/initial.migration.js';
import { RecordsSchemaMigration } from './kernel/store/schema.migration.js';
import { RecordsViewsMigration } from './core/store/views.migration.js';
import { RecordsQueryIndexesMigration } from './core/store/query.migration.js';
import { RecordsShareLinksMigration } from './shares/store/share.migration.js';
import { RecordsLinkInsertStatementMigration, RecordsLinkTableMigration } from './core/store/link.migration.js';
import { RecordsFarmMigration } from './farm/store/farm.migration.js';
import { RecordsSiteSyncMigration } from './sitesync/store/sitesync.migration.js';
import { RecordsSyncMigration } from './sync/store/sync.migration.js';
import { RecordsIdempotencyMigration } from './idempotency/store/idempotency.migration.js';
import { RecordsIdempotencyRecordMigration } from './idempotency/store/idempotency-record.migration.js';
import { RecordsIdempotencyPrincipalMigration } from './idempotency/store/idempotency-principal.migration.js';
import { RecordsFarmQueueMigration } from './farm/store/farm-queue.migration.js';
import { RecordsFarmOutputMigration } from './farm/store/farm-output.migration.js';
import { RecordsRestrictedProjectsMigration } from './kernel/store/project.readers.migration.js';

/** Every migration of schema `records`, oldest first. */
export const RECORDS_MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20251122000001Initial', class: RecordsInitialMigration },
  { name: 'records-0002-schema-state', class: RecordsSchemaMigration },
  { name: 'records-0003-view-indexes', class: RecordsViewsMigration },
  { name: 'records-0004-query-indexes', class: RecordsQueryIndexesMigration },
  { name: 'records-0005-share-links', class: RecordsShareLinksMigration },
  { name: 'records-0006-link-table', class: RecordsLinkTableMigration },
  { name: 'records-0007-farm', class: RecordsFarmMigration },
  { name: 'records-0008-sitesync', class: RecordsSiteSyncMigration },
  { name: 'records-0009-sync', class: RecordsSyncMigration },
  { name: 'records-0010-idempotency', class: RecordsIdempotencyMigration },
  { name: 'records-0011-idempotency-record', class: RecordsIdempotencyRecordMigration },
  { name: 'records-0012-farm-queue-index', class: RecordsFarmQueueMigration },
  { name: 'records-0013-link-insert-statement', class: RecordsLinkInsertStatementMigration },
  { name: 'records-0014-idempotency-principal', class: RecordsIdempotencyPrincipalMigration },
  { name: 'records-0015-farm-chunk-output-json', class: RecordsFarmOutputMigration },
  { name: 'records-0016-restricted-projects', class: RecordsRestrictedProjectsMigration },
];
