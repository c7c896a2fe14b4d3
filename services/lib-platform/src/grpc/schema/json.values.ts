/**
 * Reading the REST JSON of the schema service's groups (actions, addons, scheduler) into typed
 * protobuf messages: the JSON was validated already (by the gateway's route schemas, or built by
 * the service itself), so a value of another type is simply left out.
 */

/** A JSON object with arbitrary keys. */
export type JsonObject = Record<string, unknown>;

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` when it is a string. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `v` when it is an integer. */
export const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** The strings of `v` when it is an array. */
export const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The object at `v`, or an empty one. */
export const objectAt = (v: unknown): JsonObject => (isJsonObject(v) ? v : {});

/** The string map at `v` (its string values). */
export const stringMap = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(objectAt(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));

/** `out` with `key` set to `value` unless it is undefined (optional proto fields stay out of the JSON). */
export function put(out: JsonObject, key: string, value: unknown): JsonObject {
  if (value !== undefined) out[key] = value;
  return out;
}

/** An optional proto string as JSON: absent is null. */
export const orNull = <T>(v: T | undefined): T | null => (v === undefined ? null : v);
