/**
 * The codes of the run-time data model (docs/api-notes.md, Schema): field codes, the codes of
 * statuses, steps, priorities, enum options, workflows, task templates, applications and tools,
 * and the field types. The gateway's body schemas and the schema service both use these.
 */

/** Field codes: a lower-case letter, then up to 63 lower-case letters, digits and `_`. */
export const FIELD_CODE_PATTERN = '^[a-z][a-z0-9_]{0,63}$';

export const FIELD_CODE = new RegExp(FIELD_CODE_PATTERN);

/**
 * Status, step, priority, option, workflow, template, application and tool codes: a letter or
 * digit, then up to 63 letters, digits, `_`, `-` and `.` (`ip`, `needs-changes`, `Admin`, `mtoa`).
 * Never a `/`: a tool selector is `<tool>/<version>`.
 */
export const DEFINITION_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

export const DEFINITION_CODE = new RegExp(DEFINITION_CODE_PATTERN);

/** The record columns (docs/api-notes.md, Records): a field may not be named after one. */
export const RESERVED_FIELD_CODES: ReadonlySet<string> = new Set([
  'id',
  'entity_type',
  'project_id',
  'status',
  'active',
  'thumbnail_id',
  'created_by',
  'created_at',
  'updated_at',
  'data',
]);

/** Every field type a record's `data` value can have. */
export const FIELD_TYPES = [
  'text',
  'integer',
  'float',
  'boolean',
  'date',
  'datetime',
  'enum',
  'multi_enum',
  'link',
  'multi_link',
  'json',
  'url',
  'color',
  'duration',
] as const;

export type FieldType = (typeof FIELD_TYPES)[number];

/** Types whose values are option codes. */
export const OPTION_FIELD_TYPES: ReadonlySet<FieldType> = new Set(['enum', 'multi_enum']);

/** Types whose values are links `{"type","id"}`. */
export const LINK_FIELD_TYPES: ReadonlySet<FieldType> = new Set(['link', 'multi_link']);

/** The states a status can stand for. */
export const STATUS_STATES = ['not_started', 'in_progress', 'done', 'blocked'] as const;

export type StatusState = (typeof STATUS_STATES)[number];

/** True when `s` is a well-formed field code that is not a record column. */
export function isFieldCode(s: unknown): s is string {
  return typeof s === 'string' && FIELD_CODE.test(s) && !RESERVED_FIELD_CODES.has(s);
}

/** True when `s` is a well-formed status, step, priority, option, ... code. */
export function isDefinitionCode(s: unknown): s is string {
  return typeof s === 'string' && DEFINITION_CODE.test(s);
}
