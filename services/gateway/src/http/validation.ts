/**
 * zod issues → the FastAPI-style 422 entries (docs/api-notes.md, Errors) (`loc`, `msg`, `type`), every
 * problem at once, and the one `validate` helper every route uses.
 */
import { AppError, MAX_PROBLEMS, type Problem } from '@reelbase/lib-platform';
import type { z } from 'zod';

/** Where a value came from; the first element of every `loc`. */
export type Source = 'body' | 'query' | 'path';

type Issue = z.core.$ZodIssue & { input?: unknown };

const TYPE_NAMES: Record<string, [type: string, msg: string]> = {
  string: ['string_type', 'Input should be a valid string'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  object: ['dict_type', 'Input should be a valid dictionary or object'],
  record: ['dict_type', 'Input should be a valid dictionary or object'],
  array: ['list_type', 'Input should be a valid list'],
  null: ['none_required', 'Input should be None'],
};

function typeProblem(issue: Issue & { code: 'invalid_type' }, source: Source): [string, string] {
  if (!('input' in issue) || issue.input === undefined) return ['missing', 'Field required'];
  // Query and path values are strings coerced to numbers: a failed coercion is a parsing error.
  if ((issue.expected === 'number' || issue.expected === 'int') && source !== 'body') {
    return ['int_parsing', 'Input should be a valid integer, unable to parse string as an integer'];
  }
  return TYPE_NAMES[issue.expected] ?? ['value_error', issue.message];
}

function boundProblem(issue: Issue & { code: 'too_big' | 'too_small' }): [string, string] {
  const big = issue.code === 'too_big';
  const limit = big ? (issue as { maximum: number | bigint }).maximum : (issue as { minimum: number | bigint }).minimum;
  switch (issue.origin) {
    case 'number':
    case 'int':
    case 'bigint':
      return big
        ? issue.inclusive
          ? ['less_than_equal', `Input should be less than or equal to ${limit}`]
          : ['less_than', `Input should be less than ${limit}`]
        : issue.inclusive
          ? ['greater_than_equal', `Input should be greater than or equal to ${limit}`]
          : ['greater_than', `Input should be greater than ${limit}`];
    case 'string':
      return big
        ? ['string_too_long', `String should have at most ${limit} characters`]
        : ['string_too_short', `String should have at least ${limit} characters`];
    case 'array':
    case 'set':
      return big ? ['too_long', `List should have at most ${limit} items`] : ['too_short', `List should have at least ${limit} items`];
    default:
      return ['value_error', issue.message];
  }
}

/** Maps zod issues to 422 problems, each `loc` starting with `source` (plus `prefix`). */
export function toProblems(issues: readonly z.core.$ZodIssue[], source: Source, prefix: (string | number)[] = []): Problem[] {
  const out: Problem[] = [];
  for (const raw of issues) {
    const issue = raw as Issue;
    const loc: (string | number)[] = [source, ...prefix, ...(issue.path as (string | number)[])];
    switch (issue.code) {
      case 'unrecognized_keys':
        for (const key of issue.keys) out.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
        continue;
      case 'invalid_type': {
        const [type, msg] = typeProblem(issue, source);
        out.push({ loc, msg, type });
        continue;
      }
      case 'too_big':
      case 'too_small': {
        const [type, msg] = boundProblem(issue);
        out.push({ loc, msg, type });
        continue;
      }
      case 'invalid_format':
        if (issue.format === 'uuid' || issue.format === 'guid') {
          out.push({ loc, msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
        } else if (issue.format === 'regex') {
          const pattern = String((issue as { pattern?: string }).pattern ?? '').replace(/^\/|\/$/g, '');
          out.push({ loc, msg: `String should match pattern '${pattern}'`, type: 'string_pattern_mismatch' });
        } else {
          out.push({ loc, msg: `value is not a valid ${issue.format}`, type: 'value_error' });
        }
        continue;
      case 'invalid_value':
        // A missing key of an enum or literal is missing, like any other.
        if (issue.input === undefined) {
          out.push({ loc, msg: 'Field required', type: 'missing' });
          continue;
        }
        out.push({
          loc,
          msg: `Input should be ${issue.values.map((v) => `'${String(v)}'`).join(', ')}`,
          type: issue.values.length > 1 ? 'enum' : 'literal_error',
        });
        continue;
      case 'invalid_union': {
        // A nullable or union member failed: report the most specific member's problems.
        const nested = issue.errors.find((e) => e.length > 0);
        if (nested) out.push(...toProblems(nested, source, [...prefix, ...(issue.path as (string | number)[])]));
        else out.push({ loc, msg: issue.message, type: 'value_error' });
        continue;
      }
      default:
        out.push({ loc, msg: issue.message, type: 'value_error' });
    }
  }
  return out;
}

/** How many problems a 422 lists by default (MAX_PROBLEMS). */
export const DEFAULT_MAX_PROBLEMS = MAX_PROBLEMS;

/**
 * A 422 naming `problems`: the first `max`, then one entry `{"loc": [<source>], "type":
 * "too_many_errors"}` whose `msg` says how many more were found, echoed input clipped
 * (lib-platform's capProblems): a body with thousands of unknown keys gets a short answer, in
 * the same 422 shape.
 */
export function invalidOf(problems: Problem[], max = DEFAULT_MAX_PROBLEMS): AppError {
  return AppError.invalid(problems, undefined, max);
}

/** Parses `value` with `schema`; pushes problems into `problems` and returns undefined on failure. */
export function collect<S extends z.ZodType>(schema: S, value: unknown, source: Source, problems: Problem[]): z.output<S> | undefined {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  problems.push(...toProblems(result.error.issues, source));
  return undefined;
}

/** Parses one value or throws a 422 {@link AppError} naming every problem. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, source: Source): z.output<S> {
  const problems: Problem[] = [];
  const out = collect(schema, value, source, problems);
  if (problems.length > 0) throw invalidOf(problems);
  return out as z.output<S>;
}
