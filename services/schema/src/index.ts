/**
 * The schema service: the run-time data model every record obeys.
 */
export { schemaConfigShape, parseSchemaConfig, loadSchemaConfig, SCHEMA_FAULTS } from './config.js';
export type { SchemaConfig, SchemaFault } from './config.js';
export { startSchema } from './service.js';
export type { RunningSchema } from './service.js';
export { SCHEMA_SERVICE_NAME } from './definitions/grpc/schema.handler.js';
export { BUILTIN_TYPES } from './definitions/domain/builtins.js';
export { DEFAULT_TOOLS } from './definitions/domain/catalog.js';
export { ADDON_SETTINGS_SQL } from './addons/store/addons.repository.js';
export { compileSettings, ValidatorCache } from './addons/domain/validators.js';
export { resolveSettings } from './addons/domain/settings.merge.js';
export { ADDON_LIMITS } from './addons/domain/addon.limits.js';
