/**
 * What a filter path ends on (a record column or a data field) as a value kind, the operators each
 * kind accepts, and the checks a condition's values pass for their kind before they are bound.
 */
import { isUuid, type FieldType } from '@reelbase/lib-platform';
import { DATE, DATETIME, isPlainObject, isRealDate, refuse, TYPE_CODE, type Loc, type Operator, type QueryColumn } from './filter.grammar.js';

/** What a path ends on: a column or a data field, with the type that decides its operators. */
export type ValueKind =
  | 'uuid'
  | 'code'
  | 'boolean'
  | 'timestamp'
  | 'text'
  | 'integer'
  | 'float'
  | 'date'
  | 'datetime'
  | 'enum'
  | 'multi_enum'
  | 'link'
  | 'multi_link'
  | 'json'
  | 'duration';

export interface Target {
  /** Table alias the predicate is written over. */
  alias: string;
  kind: ValueKind;
  /** Column name, or undefined for a data field. */
  column?: QueryColumn;
  /** Data field code. */
  field?: string;
}

export const COLUMN_KIND: Record<QueryColumn, ValueKind> = {
  id: 'uuid',
  project_id: 'uuid',
  created_by: 'uuid',
  thumbnail_id: 'uuid',
  status: 'code',
  entity_type: 'code',
  active: 'boolean',
  created_at: 'timestamp',
  updated_at: 'timestamp',
};

/** The kind of each field type (every type of lib-platform's one list). */
export const FIELD_KIND: Record<FieldType, ValueKind> = {
  text: 'text',
  url: 'text',
  color: 'text',
  integer: 'integer',
  float: 'float',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
  enum: 'enum',
  multi_enum: 'multi_enum',
  link: 'link',
  multi_link: 'multi_link',
  json: 'json',
  duration: 'duration',
};

const EQUALITY: Operator[] = ['is', 'is_not', 'in', 'not_in'];
const ORDER: Operator[] = ['less_than', 'greater_than', 'less_or_equal', 'greater_or_equal'];
const RANGE: Operator[] = ['between', 'not_between'];
const TEXT: Operator[] = ['contains', 'not_contains', 'starts_with', 'ends_with'];
const RELATIVE: Operator[] = ['in_last', 'in_next'];

/** The operators each kind accepts. */
export const KIND_OPERATORS: Record<ValueKind, ReadonlySet<Operator>> = {
  uuid: new Set(EQUALITY),
  code: new Set([...EQUALITY, ...ORDER, ...TEXT]),
  boolean: new Set(EQUALITY),
  timestamp: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  text: new Set([...EQUALITY, ...ORDER, ...TEXT]),
  integer: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  float: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  duration: new Set([...EQUALITY, ...ORDER, ...RANGE]),
  date: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  datetime: new Set([...EQUALITY, ...ORDER, ...RANGE, ...RELATIVE]),
  enum: new Set(EQUALITY),
  multi_enum: new Set(EQUALITY),
  link: new Set([...EQUALITY, 'type_is', 'type_is_not']),
  multi_link: new Set([...EQUALITY, 'type_is', 'type_is_not']),
  json: new Set(['is', 'is_not']),
};

/** A value for is / in, checked against the target's kind; null stays null ("is empty"). */
export function scalar(t: Target, value: unknown, loc: Loc): unknown {
  if (value === null) return null;
  switch (t.kind) {
    case 'uuid':
      if (typeof value !== 'string' || !isUuid(value)) return refuse(loc, 'Input should be a valid UUID', 'uuid_parsing');
      return value.toLowerCase();
    case 'code':
    case 'text':
    case 'enum':
    case 'multi_enum':
      if (typeof value !== 'string') return refuse(loc, 'Input should be a valid string', 'string_type');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') return refuse(loc, 'Input should be a valid boolean', 'bool_type');
      return value;
    case 'integer':
    case 'float':
      return number(value, loc);
    case 'duration':
      if (!(typeof value === 'number' && Number.isFinite(value)) && typeof value !== 'string')
        return refuse(loc, 'Input should be whole minutes or an ISO 8601 duration', 'duration_parsing');
      return value;
    case 'date':
      return date(value, loc);
    case 'timestamp':
    case 'datetime':
      return datetime(value, loc);
    case 'link':
    case 'multi_link': {
      if (!isPlainObject(value) || typeof value.type !== 'string' || !TYPE_CODE.test(value.type) || typeof value.id !== 'string' || !isUuid(value.id)) {
        return refuse(loc, 'Input should be a link {"type", "id"}', 'link_type');
      }
      const extra = Object.keys(value).filter((k) => k !== 'type' && k !== 'id');
      if (extra.length > 0) return refuse([...loc, extra[0]!], 'Extra inputs are not permitted', 'extra_forbidden');
      return { type: value.type, id: value.id.toLowerCase() };
    }
    case 'json':
      return value;
  }
}

function number(value: unknown, loc: Loc): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return refuse(loc, 'Input should be a valid number', 'float_type');
  return value;
}

function date(value: unknown, loc: Loc): string {
  if (typeof value !== 'string' || !DATE.test(value) || !isRealDate(value))
    return refuse(loc, 'Input should be a valid date in the format YYYY-MM-DD', 'date_parsing');
  return value;
}

function datetime(value: unknown, loc: Loc): string {
  if (typeof value !== 'string' || !DATETIME.test(value) || !isRealDate(value))
    return refuse(loc, 'Input should be a valid ISO 8601 datetime with a time zone (Z or ±HH:MM)', 'datetime_parsing');
  return value;
}

/** A value for comparisons and between. */
export function orderedValue(t: Target, value: unknown, loc: Loc): unknown {
  switch (t.kind) {
    case 'integer':
    case 'float':
    case 'duration':
      return number(value, loc);
    case 'date':
      return date(value, loc);
    case 'timestamp':
    case 'datetime':
      return datetime(value, loc);
    default:
      if (typeof value !== 'string') return refuse(loc, 'Input should be a valid string', 'string_type');
      return value;
  }
}
