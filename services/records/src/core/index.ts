/**
 * The core module: records (create, batch, update, retire, revive), queries, notes and work views,
 * summaries, and the schema the records service validates against (docs/architecture.md, "The
 * records modules").
 */
export { RecordService } from './domain/record.service.js';
export { KeyedWrites } from './domain/keyed.writes.js';
export { RecordViews } from './domain/record.views.js';
export { RecordQueries, planQuery, encodeCursor, LINK_HOP_CAP } from './domain/record.query.js';
export type { QueryInput, PlanOptions } from './domain/record.query.js';
export type { QueryPlan } from './domain/core.ports.js';
export { RecordSummaries } from './domain/record.summary.js';
export { SchemaAdmin } from './domain/schema.admin.js';
export { KnexRecordStore } from './store/knex.record.store.js';
export { openQueryPool, QueryGate, SUMMARY_LINE } from './store/query.pool.js';
export { queryStatements, runQueryPlan } from './store/query.repository.js';
export type { Statement } from './store/query.repository.js';
export { QUERY_INDEXES } from './store/query.migration.js';
export { LINK_INDEXES, LINK_TABLE_OFF_SQL, LINK_TABLE_ON_SQL } from './store/link.migration.js';
export { RECORDS_SERVICE_NAME, recordsHandlers } from './grpc/records.handler.js';
