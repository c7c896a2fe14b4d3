/**
 * What an addon's `settings_schema` may say (docs/api-notes.md, "Addons"): a JSON Schema of draft
 * 2020-12 using only `type`, `properties`, `required`, `enum`, `items`, `minimum`, `maximum`,
 * `minLength`, `maxLength`, `pattern`, `default`, `additionalProperties`, `description` and `title`
 * (plus `$schema` naming draft 2020-12 at the root), whose root is an object. Everything else
 * (`$ref` among them, so no schema can refer to itself) is refused with a problem located in the
 * schema, as are schemas past the bounds of {@link ADDON_LIMITS}. Patterns are matched by RE2
 * (linear time, see validators.ts); one that a backtracking engine would run in exponential time
 * is refused all the same, since pipeline tools check settings with their own engines.
 */
import type { Problem } from '@reelbase/lib-platform';
import { RE2JS } from 're2js';
import safeRegex from 'safe-regex2';
import { ADDON_LIMITS, DRAFT_2020_12 } from './addon.limits.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };
export type Loc = (string | number)[];

/** The keywords a settings schema may use. */
export const SCHEMA_KEYWORDS: readonly string[] = [
  'type',
  'properties',
  'required',
  'enum',
  'items',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'default',
  'additionalProperties',
  'description',
  'title',
];
const KEYWORDS = new Set(SCHEMA_KEYWORDS);
const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Bytes of `v` as JSON text. */
export const jsonBytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

const shortList = (list: readonly string[]): string => list.map((k) => `\`${k}\``).join(', ');

/** Why `pattern` cannot be used, or null when it can. */
export function patternProblem(pattern: string): string | null {
  if (pattern.length > ADDON_LIMITS.patternChars) return `a pattern has at most ${ADDON_LIMITS.patternChars} characters`;
  try {
    RE2JS.compile(pattern);
  } catch (err) {
    return `not a supported regular expression (RE2 syntax: no look-around, no back-references): ${(err as Error).message}`;
  }
  // The RE2 engine never backtracks, but tools reading the same schema may: refuse what would
  // take them exponential time (nested quantifiers).
  if (!safeRegex(pattern)) return 'the pattern can backtrack catastrophically (a quantifier inside a quantified group); rewrite it without nesting';
  return null;
}

/**
 * Every problem of `schema` as a settings schema, located under `loc` (e.g. `["body",
 * "settings_schema"]`); empty when it may be used.
 */
export function settingsSchemaProblems(schema: unknown, loc: Loc): Problem[] {
  const problems: Problem[] = [];
  const add = (at: Loc, msg: string, type = 'value_error') => problems.push({ loc: at, msg, type });
  if (!isObject(schema)) {
    add(loc, 'Input should be a valid dictionary or object', 'dict_type');
    return problems;
  }
  const bytes = jsonBytes(schema);
  if (bytes > ADDON_LIMITS.schemaBytes) {
    add(loc, `a settings schema has at most ${ADDON_LIMITS.schemaBytes} bytes of JSON (this one has ${bytes})`, 'too_large');
    return problems;
  }
  if (schema.type !== 'object') add([...loc, 'type'], 'the root of a settings schema must be "type": "object"');
  let nodes = 0;
  let tooMany = false;

  const walk = (node: unknown, at: Loc, depth: number, root: boolean): void => {
    if (problems.length > 200 || tooMany) return;
    if (!isObject(node)) {
      add(at, 'a sub-schema must be a JSON object', 'dict_type');
      return;
    }
    if (depth > ADDON_LIMITS.schemaDepth) {
      add(at, `sub-schemas nest at most ${ADDON_LIMITS.schemaDepth} deep`, 'too_deep');
      return;
    }
    if (++nodes > ADDON_LIMITS.schemaNodes) {
      tooMany = true;
      add(loc, `a settings schema has at most ${ADDON_LIMITS.schemaNodes} sub-schemas`, 'too_large');
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      const here = [...at, key];
      if (key === '$schema' && root) {
        if (value !== DRAFT_2020_12) add(here, `only draft 2020-12 is supported ("${DRAFT_2020_12}")`);
        continue;
      }
      if (!KEYWORDS.has(key)) {
        const why = key === '$ref' || key === '$defs' || key === '$dynamicRef' ? ' (references are not supported; write the sub-schema in place)' : '';
        add(here, `keyword ${key} is not supported${why}; a settings schema uses ${shortList(SCHEMA_KEYWORDS)}`, 'extra_forbidden');
        continue;
      }
      switch (key) {
        case 'type': {
          const list = Array.isArray(value) ? value : [value];
          const ok = list.length > 0 && list.every((t) => typeof t === 'string' && TYPES.has(t)) && new Set(list).size === list.length;
          if (!ok) add(here, `type is one of ${shortList([...TYPES])}, or a list of distinct ones`);
          break;
        }
        case 'properties':
          if (!isObject(value)) add(here, 'properties maps names to sub-schemas', 'dict_type');
          else for (const [name, sub] of Object.entries(value)) walk(sub, [...here, name], depth + 1, false);
          break;
        case 'items':
          walk(value, here, depth + 1, false);
          break;
        case 'additionalProperties':
          if (typeof value !== 'boolean') walk(value, here, depth + 1, false);
          break;
        case 'required':
          if (!Array.isArray(value) || !value.every((v) => typeof v === 'string') || new Set(value).size !== value.length) {
            add(here, 'required is a list of distinct property names', 'list_type');
          }
          break;
        case 'enum':
          if (!Array.isArray(value) || value.length === 0) add(here, 'enum is a non-empty list of values', 'list_type');
          else if (value.length > ADDON_LIMITS.enumValues) add(here, `enum has at most ${ADDON_LIMITS.enumValues} values`, 'too_large');
          break;
        case 'minimum':
        case 'maximum':
          if (typeof value !== 'number' || !Number.isFinite(value)) add(here, `${key} is a number`, 'float_type');
          break;
        case 'minLength':
        case 'maxLength':
          if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) add(here, `${key} is a whole number, 0 or more`, 'int_type');
          break;
        case 'pattern':
          if (typeof value !== 'string') add(here, 'pattern is a regular expression as a string', 'string_type');
          else {
            const why = patternProblem(value);
            if (why) add(here, why, 'pattern_unsafe');
          }
          break;
        case 'description':
        case 'title':
          if (typeof value !== 'string') add(here, `${key} is a string`, 'string_type');
          break;
        default: // `default`: any JSON value, an annotation only
          break;
      }
    }
  };
  walk(schema, loc, 1, true);
  return problems;
}

/**
 * The schema an override (a partial settings object) is checked against: `schema` without any
 * `required`, and with `additionalProperties: false` where an object names its `properties` and
 * says nothing about other keys, so an override may leave anything out but may only name known
 * keys, with the right types and within the bounds. Only objects are partial: they merge key by
 * key, while an array replaces the one below it whole, so `items` keeps its `required`.
 */
export function partialSchemaOf(schema: JsonObject): JsonObject {
  const strip = (node: Json): Json => {
    if (!isObject(node)) return node;
    const out: JsonObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === 'required') continue;
      if (key === 'properties' && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v)]));
      else if (key === 'additionalProperties') out[key] = strip(value);
      else out[key] = value;
    }
    if (isObject(node.properties) && node.additionalProperties === undefined) out.additionalProperties = false;
    return out;
  };
  return strip(schema) as JsonObject;
}
