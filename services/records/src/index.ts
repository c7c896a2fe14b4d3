/**
 * The records service: the universal record store with its transactional outbox. `startRecords`
 * runs it; its modules (docs/architecture.md, "The records modules") are exported too, as
 * service.ts composes them, for a program that runs one of them in its own process.
 */
export { recordsConfigShape, parseRecordsConfig, loadRecordsConfig, RECORDS_FAULTS } from './config.js';
export type { RecordsConfig, RecordsFault } from './config.js';
export { startRecords } from './service.js';
export type { RunningRecords } from './service.js';
export { migrateRecordsSchema } from './migrate.js';
export * as kernel from './kernel/index.js';
export * as core from './core/index.js';
export * as shares from './shares/index.js';
export * as farm from './farm/index.js';
export * as sitesync from './sitesync/index.js';
export * as sync from './sync/index.js';
export * as idempotency from './idempotency/index.js';
