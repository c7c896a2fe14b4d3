/**
 * The kernel every records module shares (docs/architecture.md, "The records modules"): the record
 * row and its statements, the stored schema, the outbox.
 */
export type { NewRecord, OutboxEvent, RecordsBusTopics, RecordValues, StoredRecord, StoredSchema, WriteGuard } from './domain/record.ports.js';
export type { RecordView, ClientRecord } from './domain/record.types.js';
export { PROJECT_SCOPED_TYPES, requiresProject } from './domain/record.rules.js';
export { compileSchema } from './domain/schema.snapshot.js';
export type { SchemaSnapshot } from './domain/schema.snapshot.js';
export { insertWithEventPgStatement } from './store/record.repository.js';
export { SCHEMA_VERSION_SQL } from './store/schema.repository.js';
export { RECORDS_OUTBOX } from './store/outbox.repository.js';
export { OutboxEntitySchema } from './store/outbox.entity.js';
export { RecordEntitySchema } from './store/record.entity.js';
export { toProtoRecord } from './grpc/record.proto.js';
