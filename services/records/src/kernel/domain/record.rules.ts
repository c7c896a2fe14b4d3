/**
 * Invariants records checks itself until schema validation takes over: type names, id
 * shapes and which built-in types must belong to a project.
 */
import { AppError, ENTITY_TYPE_CODE_PATTERN, isEntityTypeCode, isUuid, type Problem } from '@reelbase/lib-platform';

/** Built-in types that always live inside a project (docs/api-notes.md, Records). */
export const PROJECT_SCOPED_TYPES: ReadonlySet<string> = new Set([
  'Sequence',
  'Shot',
  'Asset',
  'Task',
  'Note',
  'Version',
  'Product',
  'Representation',
  'Playlist',
  'TimeLog',
  'FarmJob',
]);

/** True when records of `entityType` need a `project_id`. */
export function requiresProject(entityType: string): boolean {
  return PROJECT_SCOPED_TYPES.has(entityType);
}

/** Throws `invalid` at `["path","entity_type"]` for a malformed type code. */
export function checkEntityType(entityType: string): void {
  if (!isEntityTypeCode(entityType)) {
    throw AppError.invalid([{ loc: ['entity_type'], msg: `String should match pattern '${ENTITY_TYPE_CODE_PATTERN}'`, type: 'string_pattern_mismatch' }]);
  }
}

/** Adds a problem for each given id-valued body field that is not a UUID. */
export function uuidProblems(fields: Record<string, string | null | undefined>): Problem[] {
  const problems: Problem[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null && !isUuid(value)) {
      problems.push({ loc: [name], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    }
  }
  return problems;
}

/** The problem of a `project_id` that does not name a live Project. */
export function projectNotFound(projectId: string): Problem {
  return { loc: ['project_id'], msg: `no live Project with id ${projectId}`, type: 'link_not_found' };
}

/** The problem of a project-scoped record without a project. */
export function projectMissing(entityType: string): Problem {
  return { loc: ['project_id'], msg: `Field required: a ${entityType} belongs to a project`, type: 'missing' };
}
