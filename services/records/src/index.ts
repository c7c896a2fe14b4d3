/**
 * The records service: the universal record store with its transactional outbox.
 */
export { recordsConfigShape, parseRecordsConfig, loadRecordsConfig, RECORDS_FAULTS } from './config.js';
export type { RecordsConfig, RecordsFault } from './config.js';
export { startRecords } from './service.js';
export type { RunningRecords } from './service.js';
export { RECORDS_SERVICE_NAME, toProtoRecord } from './grpc/records.handler.js';
export { PROJECT_SCOPED_TYPES, requiresProject } from './domain/record.rules.js';
export type { RecordView } from './domain/record.types.js';
export { migrateRecordsSchema } from './store/migrate.js';
export { planQuery, encodeCursor, LINK_HOP_CAP } from './domain/record.query.js';
export type { QueryInput, QueryPlan, PlanOptions } from './domain/record.query.js';
export { compileSchema } from './domain/schema.snapshot.js';
export type { SchemaSnapshot } from './domain/schema.snapshot.js';
export { queryStatements, runQueryPlan } from './store/query.repository.js';
export { insertWithEventPgStatement } from './store/record.repository.js';
export { SCHEMA_VERSION_SQL } from './store/schema.repository.js';
export type { Statement } from './store/query.repository.js';
export { QUERY_INDEXES } from './store/query.migration.js';
export { LINK_INDEXES, LINK_TABLE_OFF_SQL, LINK_TABLE_ON_SQL } from './store/link.migration.js';
export { FarmRepository, openFarmPool } from './store/farm.repository.js';
export type { FarmPool } from './store/farm.repository.js';
export { newLease } from './domain/farm/farm.rules.js';
export { openDirectSyncImporter } from './sync.direct.js';
export type { DirectSyncImporter } from './sync.direct.js';
