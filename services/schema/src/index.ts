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
export { ADDON_SETTINGS_SQL } from './store/addons.repository.js';
export { compileSettings, ValidatorCache } from './domain/addons/validators.js';
export { resolveSettings } from './domain/addons/settings.merge.js';
export { ADDON_LIMITS } from './domain/addons/addon.limits.js';
