/**
 * Checks a record write against the schema (docs/architecture.md, "Records obey the schema"; docs/api-notes.md,
 * Records). Pure: it sees the compiled snapshot and the write, never the database. What needs the
 * database (link targets that exist, are live and have the linked type; the project) is returned as
 * a list for the store to check inside the write's transaction.
 *
 * Values per field type:
 * - text: a string · integer: a whole JSON number · float: any finite JSON number · boolean: true/false
 * - date: `YYYY-MM-DD`, a real calendar day · datetime: ISO 8601 with a time and a zone (`Z` or `±HH:MM`)
 * - enum: one option code · multi_enum: an array of distinct option codes
 * - link: `{"type","id"}` (nothing else), `type` one of the field's link_types (any type when it has none)
 * - multi_link: an array of such links · json: any JSON value
 * - url: an absolute `http` or `https` URL · color: `#rrggbb`
 * - duration: whole minutes (a non-negative integer) or an ISO 8601 duration such as `PT1H30M` or `P2D`
 * A `null` in a create is "not given"; in a PATCH it removes the key (a required field cannot be removed).
 * Problems are located at `["data", "<field>", ...]`; the gateway adds the `body` head.
 */
import { AppError, clipEcho, isUuid, type Problem } from '@reelbase/lib-platform';
import type { DataObject } from './record.types.js';
import type { CompiledEntityType, CompiledField, CompiledSchema } from './schema.snapshot.js';

/** A link a write stores: the store checks that a live record `id` of `type` exists. */
export interface LinkRef {
  type: string;
  id: string;
  loc: (string | number)[];
}

export interface CheckedWrite {
  problems: Problem[];
  /** Create: `data` with defaults applied. Update: the merged data unchanged. */
  data: DataObject;
  links: LinkRef[];
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/i;
const DURATION =
  /^P(?!$)(?:\d+(?:[.,]\d+)?Y)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?W)?(?:\d+(?:[.,]\d+)?D)?(?:T(?=\d)(?:\d+(?:[.,]\d+)?H)?(?:\d+(?:[.,]\d+)?M)?(?:\d+(?:[.,]\d+)?S)?)?$/;
const COLOR = /^#[0-9a-fA-F]{6}$/;

function isRealDate(s: string): boolean {
  const m = DATE.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

function isUrl(s: string): boolean {
  if (!/^https?:\/\//i.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

const quoted = (codes: Iterable<string>) => {
  const list = [...codes].map((c) => `'${c}'`);
  return list.length === 0 ? 'no option (the field has none)' : list.length === 1 ? list[0]! : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
};

/** One link value; pushes problems or the link to check. */
function checkLink(field: CompiledField, value: unknown, loc: (string | number)[], problems: Problem[], links: LinkRef[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.push({ loc, msg: 'Input should be a link {"type", "id"}', type: 'link_type' });
    return;
  }
  const link = value as DataObject;
  const extra = Object.keys(link).filter((k) => k !== 'type' && k !== 'id');
  for (const k of extra) problems.push({ loc: [...loc, k], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  let ok = extra.length === 0;
  if (typeof link.type !== 'string' || link.type === '') {
    problems.push({ loc: [...loc, 'type'], msg: 'Field required: the linked record type', type: 'missing' });
    ok = false;
  } else if (field.linkTypes.size > 0 && !field.linkTypes.has(link.type)) {
    problems.push({
      loc: [...loc, 'type'],
      msg: `Input should be ${quoted(field.linkTypes)}: ${field.code} cannot link a ${clipEcho(link.type)}`,
      type: 'link_type',
    });
    ok = false;
  }
  if (typeof link.id !== 'string' || !isUuid(link.id)) {
    problems.push({ loc: [...loc, 'id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    ok = false;
  }
  if (ok) links.push({ type: link.type as string, id: (link.id as string).toLowerCase(), loc });
}

/** Checks one value against its field; pushes problems and links to check. */
export function checkValue(field: CompiledField, value: unknown, loc: (string | number)[], problems: Problem[], links: LinkRef[]): void {
  const bad = (msg: string, type: string) => problems.push({ loc, msg, type });
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string') bad('Input should be a valid string', 'string_type');
      return;
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) bad('Input should be a valid integer', 'int_type');
      return;
    case 'float':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad('Input should be a valid number', 'float_type');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') bad('Input should be a valid boolean', 'bool_type');
      return;
    case 'date':
      if (typeof value !== 'string' || !isRealDate(value)) bad('Input should be a valid date in the format YYYY-MM-DD', 'date_parsing');
      return;
    case 'datetime': {
      const m = typeof value === 'string' ? DATETIME.exec(value) : null;
      if (!m || !isRealDate(m[1]!)) bad('Input should be a valid ISO 8601 datetime with a time zone (Z or ±HH:MM)', 'datetime_parsing');
      return;
    }
    case 'enum':
      if (typeof value !== 'string' || !field.options.has(value)) bad(`Input should be ${quoted(field.options)}`, 'enum');
      return;
    case 'multi_enum': {
      if (!Array.isArray(value)) return void bad('Input should be a valid list of option codes', 'list_type');
      const seen = new Set<unknown>();
      value.forEach((v, i) => {
        if (typeof v !== 'string' || !field.options.has(v)) problems.push({ loc: [...loc, i], msg: `Input should be ${quoted(field.options)}`, type: 'enum' });
        else if (seen.has(v)) problems.push({ loc: [...loc, i], msg: `'${v}' is listed twice`, type: 'duplicate' });
        seen.add(v);
      });
      return;
    }
    case 'link':
      checkLink(field, value, loc, problems, links);
      return;
    case 'multi_link':
      if (!Array.isArray(value)) return void bad('Input should be a valid list of links', 'list_type');
      value.forEach((v, i) => checkLink(field, v, [...loc, i], problems, links));
      return;
    case 'json':
      return;
    case 'url':
      if (typeof value !== 'string' || !isUrl(value)) bad('Input should be a valid http or https URL', 'url_parsing');
      return;
    case 'color':
      if (typeof value !== 'string' || !COLOR.test(value)) bad('Input should be a color #rrggbb', 'color_parsing');
      return;
    case 'duration':
      if (typeof value === 'number') {
        if (!Number.isSafeInteger(value) || value < 0)
          bad('Input should be whole minutes (a non-negative integer) or an ISO 8601 duration', 'duration_parsing');
      } else if (typeof value !== 'string' || !DURATION.test(value)) {
        bad('Input should be whole minutes (a non-negative integer) or an ISO 8601 duration', 'duration_parsing');
      }
      return;
    default:
      // A field type this records build does not know: accept rather than refuse every write.
      return;
  }
}

/** The type of a write, or 404 when the schema has no such type. */
export function entityTypeOf(schema: CompiledSchema, entityType: string): CompiledEntityType {
  const type = schema.entityTypes.get(entityType);
  if (!type) throw AppError.notFound(`no entity type ${entityType} in the schema`);
  return type;
}

/** The problem of a status that is not a code of the type. */
function statusProblems(schema: CompiledSchema, entityType: string, status: string | null | undefined): Problem[] {
  if (status === undefined || status === null) return [];
  const scope = schema.statuses.get(status);
  if (scope === undefined) return [{ loc: ['status'], msg: `no status '${status}' in the schema`, type: 'status' }];
  if (scope.size > 0 && !scope.has(entityType)) return [{ loc: ['status'], msg: `status '${status}' is not a status of ${entityType}`, type: 'status' }];
  return [];
}

/** Task `step` and `priority` must be codes of the schema's steps and priorities. */
function codeProblems(schema: CompiledSchema, entityType: string, data: DataObject, keys: Iterable<string>): Problem[] {
  if (entityType !== 'Task') return [];
  const problems: Problem[] = [];
  for (const key of keys) {
    const value = data[key];
    if (value === undefined || value === null) continue;
    if (key === 'step' && !(typeof value === 'string' && schema.steps.has(value))) {
      problems.push({ loc: ['data', 'step'], msg: `Input should be a step code: ${quoted(schema.steps)}`, type: 'step' });
    }
    if (key === 'priority' && !(typeof value === 'string' && schema.priorities.has(value))) {
      problems.push({ loc: ['data', 'priority'], msg: `Input should be a priority code: ${quoted(schema.priorities)}`, type: 'priority' });
    }
  }
  return problems;
}

/** Checks `keys` of `data` against the type's fields. */
function fieldProblems(type: CompiledEntityType, data: DataObject, keys: Iterable<string>, problems: Problem[], links: LinkRef[]): void {
  for (const key of keys) {
    const field = type.fields.get(key);
    if (!field) {
      problems.push({ loc: ['data', key], msg: `${type.code} has no field '${clipEcho(key)}'`, type: 'extra_forbidden' });
      continue;
    }
    const value = data[key];
    if (value === undefined || value === null) continue;
    checkValue(field, value, ['data', key], problems, links);
  }
}

/** Checks a create; the data returned has the defaults of absent fields. */
export function checkCreate(
  schema: CompiledSchema,
  write: { entityType: string; projectId: string | null; status: string | null | undefined; data: DataObject },
): CheckedWrite {
  const type = entityTypeOf(schema, write.entityType);
  const problems: Problem[] = [];
  const links: LinkRef[] = [];
  if (type.projectScoped && write.projectId === null) {
    problems.push({ loc: ['project_id'], msg: `Field required: a ${write.entityType} belongs to a project`, type: 'missing' });
  }
  problems.push(...statusProblems(schema, write.entityType, write.status));
  const data: DataObject = { ...write.data };
  for (const field of type.fields.values()) {
    if (data[field.code] === undefined && field.hasDefault) data[field.code] = structuredClone(field.default);
  }
  fieldProblems(type, data, Object.keys(data), problems, links);
  problems.push(...codeProblems(schema, write.entityType, data, Object.keys(data)));
  for (const field of type.fields.values()) {
    if (field.required && (data[field.code] === undefined || data[field.code] === null)) {
      problems.push({ loc: ['data', field.code], msg: 'Field required', type: 'missing' });
    }
  }
  return { problems, data, links };
}

/**
 * Checks a PATCH: only the keys it sets are checked (a record written under an older definition
 * stays editable), a required field cannot be removed, and links are checked only where they are
 * new. `status` is checked only when it changes.
 */
export function checkUpdate(
  schema: CompiledSchema,
  write: { entityType: string; projectId: string | null; statusChanged: boolean; status: string | null; patch: DataObject | undefined; merged: DataObject },
): CheckedWrite {
  const type = entityTypeOf(schema, write.entityType);
  const problems: Problem[] = [];
  const links: LinkRef[] = [];
  if (type.projectScoped && write.projectId === null) {
    problems.push({ loc: ['project_id'], msg: `Field required: a ${write.entityType} belongs to a project`, type: 'missing' });
  }
  if (write.statusChanged) problems.push(...statusProblems(schema, write.entityType, write.status));
  const patch = write.patch ?? {};
  const keys = Object.keys(patch);
  fieldProblems(
    type,
    patch,
    keys.filter((k) => patch[k] !== null),
    problems,
    links,
  );
  for (const key of keys) {
    if (patch[key] === null && type.fields.get(key)?.required)
      problems.push({ loc: ['data', key], msg: 'Field required: it cannot be removed', type: 'missing' });
  }
  problems.push(...codeProblems(schema, write.entityType, patch, keys));
  return { problems, data: write.merged, links };
}

/**
 * Throws 409 `transition_not_allowed` when `entityType` has transitions and none lists the change
 * from `from` to `to` for `role`. Only a change between two status codes is a transition: setting
 * the first status of a record, or clearing it, is not. A rule without roles applies to every role.
 */
export function checkTransition(schema: CompiledSchema, entityType: string, from: string | null, to: string | null, role: string): void {
  if (from === null || to === null || from === to) return;
  const rules = schema.transitions.get(entityType);
  if (!rules || rules.length === 0) return;
  const allowed = rules.some(
    (r) => r.from === from && Array.isArray(r.to) && r.to.includes(to) && (!r.roles || r.roles.length === 0 || r.roles.includes(role)),
  );
  if (!allowed) {
    throw AppError.conflict('transition_not_allowed', `${entityType} cannot go from status '${from}' to '${to}' for role ${role}`, {
      from,
      to,
    });
  }
}
