/**
 * The rules of every definition change, as pure functions from one {@link SchemaDoc} to the
 * next (docs/architecture.md, "The schema service"). Each returns the new document, the
 * definition event(s) to publish and the answer; renames also return the cascade to run over
 * the records. Nothing here does I/O: usage counts come in as arguments.
 *
 * One file per kind of definition under editor/ (edit.ts holds what they share); this module
 * is the editor as operations.ts and SchemaService use it.
 */
export * from './editor/catalogs.js';
export {
  RENAME_KINDS,
  renameEventKind,
  type DefinitionChange,
  type Edit,
  type RenameAnswer,
  type RenameKind,
  type RenamePlan,
  type SchemaEventKind,
} from './editor/edit.js';
export * from './editor/entity-types.js';
export * from './editor/fields.js';
export * from './editor/priorities.js';
export * from './editor/seed.js';
export * from './editor/statuses.js';
export * from './editor/steps.js';
export * from './editor/workflows.js';
