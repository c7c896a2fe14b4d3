/**
 * The schema service: the run-time data model every record obeys.
 */
export { schemaConfigShape, parseSchemaConfig, loadSchemaConfig, SCHEMA_FAULTS } from './config.js';
export type { SchemaConfig, SchemaFault } from './config.js';
export { startSchema } from './service.js';
export type { RunningSchema } from './service.js';
export { SCHEMA_SERVICE_NAME } from './grpc/schema.handler.js';
export { BUILTIN_TYPES } from './domain/builtins.js';
export { DEFAULT_TOOLS } from './domain/catalog.js';
