/**
 * The SQL of each operator on a filter target (filter.kinds.ts): every value bound through a
 * Binder as `$n`, negative operators as `not coalesce(<positive>, false)`.
 */
import { FIELD_CODE, MAX_IN_VALUES, MAX_RELATIVE, NEGATIVE, refuse, TYPE_CODE, UNITS, type Loc, type Operator } from './filter.grammar.js';
import { KIND_OPERATORS, orderedValue, scalar, type Target } from './filter.kinds.js';
import { likeEscape, literal, SQL_DATE_RE, SQL_DATETIME_RE, textFieldExpr } from './filter.sql.js';

/**
 * Longest `contains` / `starts_with` / `ends_with` value matched with `ILIKE` (docs/queries.md,
 * "Long text values"). A longer one is matched with `strpos`/`starts_with`/`right` on `lower()`: the
 * trigram index's cost grows with the distinct trigrams of the pattern (15 s for 20,000 random
 * characters on 1,000,000 records) and `ILIKE` lowercases the pattern again for every row, while
 * `lower($n)` of a bound value is folded once when the statement is planned.
 */
export const LIKE_MAX_CHARS = 2048;

const COMPARE: Partial<Record<Operator, string>> = { less_than: '<', greater_than: '>', less_or_equal: '<=', greater_or_equal: '>=' };

/** Binds one value as the next parameter and answers its placeholder (`$n::cast`). */
export interface Binder {
  bind(value: unknown, cast: string): string;
}

/** The predicate of one condition on its target; negative operators negate the positive one. */
export function predicate(b: Binder, t: Target, operator: Operator, cond: unknown[], loc: Loc): string {
  if (!KIND_OPERATORS[t.kind].has(operator)) {
    const name = t.column ?? t.field!;
    refuse(
      [...loc, 1],
      `'${operator}' does not apply to ${name} (${t.kind === 'code' || t.kind === 'uuid' || t.kind === 'timestamp' ? 'column' : t.kind})`,
      'operator_type',
    );
  }
  const positive = NEGATIVE[operator];
  // Null (an absent field) must count as "no match" before it is negated. A positive predicate
  // stays bare: in a WHERE, AND/OR and EXISTS treat null as false already, and only a bare
  // `column = $n` or `data @> $n` matches an index (docs/queries.md, "Query indexes").
  if (positive) return `not coalesce(${positivePredicate(b, t, positive, cond, loc)}, false)`;
  return positivePredicate(b, t, operator, cond, loc);
}

function positivePredicate(b: Binder, t: Target, op: Operator, cond: unknown[], loc: Loc): string {
  const value = cond[2];
  const vloc: Loc = [...loc, 2];
  switch (op) {
    case 'is':
      return value === null ? empty(t) : equals(b, t, [scalar(t, value, vloc)], vloc);
    case 'in': {
      if (!Array.isArray(value)) return refuse(vloc, 'Input should be a valid list', 'list_type');
      if (value.length > MAX_IN_VALUES) return refuse(vloc, `At most ${MAX_IN_VALUES} values`, 'too_long');
      if (value.length === 0) return 'false';
      const values = value.map((v, i) => scalar(t, v, [...vloc, i]));
      const withNull = values.some((v) => v === null);
      const present = values.filter((v) => v !== null);
      const parts: string[] = [];
      if (present.length > 0) parts.push(equals(b, t, present, vloc));
      if (withNull) parts.push(empty(t));
      return parts.length === 1 ? parts[0]! : `(${parts.join(' or ')})`;
    }
    case 'less_than':
    case 'greater_than':
    case 'less_or_equal':
    case 'greater_or_equal': {
      const [expr, cast] = ordered(t);
      return `${expr} ${COMPARE[op]} ${b.bind(orderedValue(t, value, vloc), cast)}`;
    }
    case 'between': {
      const [expr, cast] = ordered(t);
      const low = b.bind(orderedValue(t, value, vloc), cast);
      const high = b.bind(orderedValue(t, cond[3], [...loc, 3]), cast);
      return `(${expr} between ${low} and ${high})`;
    }
    case 'contains':
    case 'starts_with':
    case 'ends_with': {
      if (typeof value !== 'string') return refuse(vloc, 'Input should be a valid string', 'string_type');
      if (value.length > LIKE_MAX_CHARS) {
        const field = `lower(${textExpr(t)})`;
        const v = `lower(${b.bind(value, 'text')})`;
        if (op === 'contains') return `strpos(${field}, ${v}) > 0`;
        if (op === 'starts_with') return `starts_with(${field}, ${v})`;
        return `right(${field}, char_length(${v})) = ${v}`;
      }
      const e = likeEscape(value);
      const pattern = op === 'contains' ? `%${e}%` : op === 'starts_with' ? `${e}%` : `%${e}`;
      return `${textExpr(t)} ilike ${b.bind(pattern, 'text')}`;
    }
    case 'type_is': {
      if (typeof value !== 'string' || !TYPE_CODE.test(value)) return refuse(vloc, 'Input should be an entity type code', 'entity_type');
      const key = literal(t.field!, FIELD_CODE);
      const probe = t.kind === 'link' ? { [key.slice(1, -1)]: { type: value } } : { [key.slice(1, -1)]: [{ type: value }] };
      return `${t.alias}.data @> ${b.bind(JSON.stringify(probe), 'jsonb')}`;
    }
    case 'in_last':
    case 'in_next': {
      const amount = value;
      const unit = cond[3];
      if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0 || amount > MAX_RELATIVE)
        return refuse(vloc, `Input should be a whole number from 0 to ${MAX_RELATIVE}`, 'int_type');
      if (typeof unit !== 'string' || !UNITS[unit]) return refuse([...loc, 3], "Input should be 'HOUR', 'DAY', 'WEEK' or 'MONTH'", 'literal_error');
      const span = `(${b.bind(amount, 'int')} * interval '1 ${UNITS[unit]}')`;
      if (t.kind === 'date') {
        const expr = ordered(t)[0];
        // Dates are whole days: the window runs from the day `span` ago (or today) to today (or the day `span` ahead).
        return op === 'in_last'
          ? `(${expr} between (current_date - ${span})::date and current_date)`
          : `(${expr} between current_date and (current_date + ${span})::date)`;
      }
      const expr = ordered(t)[0];
      return op === 'in_last' ? `(${expr} between now() - ${span} and now())` : `(${expr} between now() and now() + ${span})`;
    }
    default:
      return refuse([...loc, 1], `'${op}' cannot be used here`, 'operator');
  }
}

/** The SQL expression of a data field as jsonb. */
export function json(t: Target): string {
  return `${t.alias}.data->${literal(t.field!, FIELD_CODE)}`;
}

/** True when the target holds nothing: a null column, an absent or null field, an empty list. */
export function empty(t: Target): string {
  if (t.column) return `${t.alias}.${t.column} is null`;
  const j = json(t);
  if (t.kind === 'multi_enum' || t.kind === 'multi_link') return `(${j} is null or ${j} in ('null'::jsonb, '[]'::jsonb))`;
  return `(${j} is null or ${j} = 'null'::jsonb)`;
}

/** True when the target equals any of `values` (already checked; none null). */
export function equals(b: Binder, t: Target, values: unknown[], loc: Loc): string {
  if (t.column) {
    const cast = { uuid: 'uuid[]', code: 'text[]', boolean: 'boolean[]', timestamp: 'timestamptz[]' }[t.kind as 'uuid'];
    return values.length === 1 ? `${t.alias}.${t.column} = ${b.bind(values[0], cast.slice(0, -2))}` : `${t.alias}.${t.column} = any(${b.bind(values, cast)})`;
  }
  if (t.kind === 'datetime') {
    const expr = ordered(t)[0];
    return values.length === 1 ? `${expr} = ${b.bind(values[0], 'timestamptz')}` : `${expr} = any(${b.bind(values, 'timestamptz[]')})`;
  }
  if (t.kind === 'json') {
    const j = json(t);
    return values.length === 1
      ? `${j} = ${b.bind(JSON.stringify(values[0]), 'jsonb')}`
      : `${j} = any(${b.bind(
          values.map((v) => JSON.stringify(v)),
          'jsonb[]',
        )})`;
  }
  // Containment on `data`: one shape for every stored type, and the shape a GIN index on data serves.
  const code = t.field!;
  literal(code, FIELD_CODE);
  const probes = values.map((v) => JSON.stringify({ [code]: t.kind === 'multi_enum' || t.kind === 'multi_link' ? [v] : v }));
  if (probes.length === 1) return `${t.alias}.data @> ${b.bind(probes[0], 'jsonb')}`;
  void loc;
  return `${t.alias}.data @> any(${b.bind(probes, 'jsonb[]')})`;
}

/** The target as an ordered SQL value and the cast of values compared with it. */
export function ordered(t: Target): [string, string] {
  if (t.column) return [`${t.alias}.${t.column}`, t.kind === 'timestamp' ? 'timestamptz' : 'text'];
  const j = json(t);
  switch (t.kind) {
    case 'integer':
    case 'float':
    case 'duration':
      return [`(case when jsonb_typeof(${j}) = 'number' then (${j})::numeric end)`, 'numeric'];
    case 'date':
      return [`(case when (${j}#>>'{}') ~ ${SQL_DATE_RE} then (${j}#>>'{}')::date end)`, 'date'];
    case 'datetime':
      return [`(case when (${j}#>>'{}') ~ ${SQL_DATETIME_RE} then (${j}#>>'{}')::timestamptz end)`, 'timestamptz'];
    default:
      return [textExpr(t), 'text'];
  }
}

/** The target as text (only strings: a number stored in a text field is not text). */
export function textExpr(t: Target): string {
  if (t.column) return `${t.alias}.${t.column}`;
  return textFieldExpr(t.alias, t.field!);
}
