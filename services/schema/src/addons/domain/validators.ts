/**
 * Compiled settings validators (Ajv, draft 2020-12), one pair per addon version: the full schema
 * (defaults, resolved settings) and its partial form (overrides, settings.schema.ts). Compiling
 * costs milliseconds, checking microseconds, so each pair is compiled once and kept, keyed by the
 * version and the digest of its body (a version deleted and registered again with another body
 * gets a new entry), at most ADDON_LIMITS.cachedValidators of them, least recently used first out.
 * Patterns run on RE2 (re2js): matching time is linear in the input whatever the pattern.
 */
import { AppError, type Problem } from '@reelbase/lib-platform';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { RE2JS } from 're2js';
import { ADDON_LIMITS } from './addon.limits.js';
import { isObject, partialSchemaOf, type Json, type JsonObject, type Loc } from './settings.schema.js';

/** Ajv's pattern engine: RE2, each pattern compiled once per validator. */
function re2(pattern: string): { test(s: string): boolean; toString(): string } {
  const re = RE2JS.compile(pattern);
  return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
}
re2.code = 're2js';

/** One Ajv instance per validator pair, so dropping a pair frees everything it compiled. */
function newAjv(): Ajv2020 {
  return new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: false,
    logger: false,
    code: { regExp: re2 as never },
  });
}

export interface SettingsValidator {
  /** Problems of `value` against the full schema, located under `loc`. */
  full(value: unknown, loc: Loc): Problem[];
  /** Problems of `value` as an override (partial), located under `loc`. */
  partial(value: unknown, loc: Loc): Problem[];
  /** JSON pointers into `value` that the full schema refuses (the problems' places). */
  fullErrors(value: unknown): ErrorObject[];
  partialErrors(value: unknown): ErrorObject[];
}

const TYPE_NAMES: Record<string, [string, string]> = {
  string: ['string_type', 'a valid string'],
  integer: ['int_type', 'a valid integer'],
  number: ['float_type', 'a valid number'],
  boolean: ['bool_type', 'a valid boolean'],
  object: ['dict_type', 'a valid dictionary or object'],
  array: ['list_type', 'a valid list'],
  null: ['none_required', 'None'],
};

/** The path of a JSON pointer into `value`: array indices as numbers, object keys as strings. */
export function pointerPath(pointer: string, value: unknown): Loc {
  if (pointer === '') return [];
  const out: Loc = [];
  let node: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) {
      const i = Number(key);
      out.push(i);
      node = node[i];
    } else {
      out.push(key);
      node = isObject(node) ? node[key] : undefined;
    }
  }
  return out;
}

const clip = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 120 ? `${s.slice(0, 120)}…` : s;
};

/** One Ajv error as a 422 problem (FastAPI's types where there is one). */
export function problemOf(e: ErrorObject, value: unknown, loc: Loc): Problem {
  const at = [...loc, ...pointerPath(e.instancePath, value)];
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return { loc: [...at, String(p.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'required':
      return { loc: [...at, String(p.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'type': {
      const types = String(p.type).split(',');
      const [type, name] = types.length === 1 ? (TYPE_NAMES[types[0]!] ?? ['type_error', types[0]!]) : ['type_error', types.join(' or ')];
      return { loc: at, msg: `Input should be ${name}`, type };
    }
    case 'enum':
      return { loc: at, msg: `Input should be one of ${clip(p.allowedValues)}`, type: 'enum' };
    case 'minimum':
      return { loc: at, msg: `Input should be greater than or equal to ${String(p.limit)}`, type: 'greater_than_equal' };
    case 'maximum':
      return { loc: at, msg: `Input should be less than or equal to ${String(p.limit)}`, type: 'less_than_equal' };
    case 'minLength':
      return { loc: at, msg: `String should have at least ${String(p.limit)} characters`, type: 'string_too_short' };
    case 'maxLength':
      return { loc: at, msg: `String should have at most ${String(p.limit)} characters`, type: 'string_too_long' };
    case 'pattern':
      return { loc: at, msg: `String should match pattern '${String(p.pattern)}'`, type: 'string_pattern_mismatch' };
    default:
      return { loc: at, msg: e.message ?? 'Input is not valid', type: e.keyword };
  }
}

/** Compiles the pair of validators of one settings schema (already checked by settingsSchemaProblems). */
export function compileSettings(schema: JsonObject, schemaLoc: Loc = ['settings_schema']): SettingsValidator {
  const ajv = newAjv();
  let full: ValidateFunction;
  let partial: ValidateFunction;
  try {
    full = ajv.compile(schema);
    partial = ajv.compile(partialSchemaOf(schema));
  } catch (err) {
    // The keyword check comes first, so this is a schema Ajv refuses for a reason of its own.
    throw AppError.invalid([{ loc: schemaLoc, msg: `not a valid JSON Schema: ${(err as Error).message}`.slice(0, 400), type: 'value_error' }]);
  }
  const errorsOf = (fn: ValidateFunction, value: unknown): ErrorObject[] => (fn(value) ? [] : [...(fn.errors ?? [])]);
  return {
    full: (value, loc) => errorsOf(full, value).map((e) => problemOf(e, value, loc)),
    partial: (value, loc) => errorsOf(partial, value).map((e) => problemOf(e, value, loc)),
    fullErrors: (value) => errorsOf(full, value),
    partialErrors: (value) => errorsOf(partial, value),
  };
}

/** The compiled validators of addon versions, least recently used first out. */
export class ValidatorCache {
  private readonly entries = new Map<string, SettingsValidator>();
  /** Compiles done by this cache (for tests and the benchmark). */
  compiled = 0;

  constructor(private readonly max: number = ADDON_LIMITS.cachedValidators) {}

  /** The validators of `name@version` whose body has `digest`, compiled on first use. */
  get(name: string, version: string, digest: string, schema: Json): SettingsValidator {
    const key = `${name}@${version}#${digest}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const made = compileSettings(schema as JsonObject);
    this.compiled++;
    this.entries.set(key, made);
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return made;
  }

  /** Forgets every compiled validator (the benchmark's cold reads). */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
