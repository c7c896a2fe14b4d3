/**
 * Resolved settings (docs/api-notes.md, "Addons"): a version's `defaults`, then the studio
 * overrides, then the project's, merged object by object (an object merges key by key; an array,
 * a scalar or null replaces what is below it whole), with the source of every leaf by JSON
 * pointer (an array is one leaf, an empty object too). An override that does not fit the version
 * read (made for another one) is left out and its pointer named in `ignored`, so the result
 * always satisfies the version's schema.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import { isObject, type Json, type JsonObject } from './settings.schema.js';
import type { SettingsValidator } from './validators.js';

export type SettingsSource = 'default' | 'studio' | 'project';

export interface Layer {
  source: Exclude<SettingsSource, 'default'>;
  overrides: JsonObject;
}

export interface Resolved {
  settings: JsonObject;
  sources: Record<string, SettingsSource>;
  ignored: string[];
}

/** One segment of a JSON pointer (RFC 6901). */
const escape = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (seg: string): string => seg.replace(/~1/g, '/').replace(/~0/g, '~');
const segments = (pointer: string): string[] => (pointer === '' ? [] : pointer.slice(1).split('/').map(unescape));

const clone = <T extends Json>(v: T): T => structuredClone(v);

/** `base` with `over` merged in (neither is changed). */
export function mergeSettings(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const below = out[key];
    out[key] = isObject(value) && isObject(below) ? mergeSettings(below, value) : clone(value);
  }
  return out;
}

/** The JSON pointer of every leaf of `value`: scalars, null, arrays and empty objects. */
export function leafPointers(value: JsonObject, prefix = ''): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const p = `${prefix}/${escape(key)}`;
    if (isObject(v) && Object.keys(v).length > 0) out.push(...leafPointers(v, p));
    else out.push(p);
  }
  return out;
}

/** Whether `value` holds something at `pointer` (following objects only). */
function has(value: JsonObject, pointer: string): boolean {
  let node: Json = value;
  for (const seg of segments(pointer)) {
    if (!isObject(node) || !Object.hasOwn(node, seg)) return false;
    node = node[seg]!;
  }
  return true;
}

/**
 * Where each leaf of `settings` came from: the highest layer holding a value at that pointer
 * (a layer that sets a pointer replaces or merges into everything below it there), else the
 * defaults.
 */
export function sourcesOf(settings: JsonObject, layers: readonly Layer[]): Record<string, SettingsSource> {
  const out: Record<string, SettingsSource> = {};
  for (const p of leafPointers(settings)) {
    let source: SettingsSource = 'default';
    for (const layer of layers) if (has(layer.overrides, p)) source = layer.source;
    out[p] = source;
  }
  return out;
}

/** `value` without what is at `pointer` (a copy; an empty object left behind stays). */
function without(value: JsonObject, pointer: string): JsonObject {
  const segs = segments(pointer);
  if (segs.length === 0) return {};
  const out = clone(value);
  let node: Json = out;
  for (const seg of segs.slice(0, -1)) {
    if (!isObject(node)) return out;
    node = node[seg]!;
  }
  if (isObject(node)) delete node[segs.at(-1)!];
  return out;
}

/** The pointer of the override an error is about (an unknown key names the key itself). */
function errorPointer(e: ErrorObject): string {
  if (e.keyword === 'additionalProperties') return `${e.instancePath}/${escape(String((e.params as { additionalProperty: unknown }).additionalProperty))}`;
  return e.instancePath;
}

/** The deepest pointer at or above `pointer` that `value` holds ('' when none but the root). */
function heldAt(value: JsonObject, pointer: string): string | null {
  const segs = segments(pointer);
  for (let n = segs.length; n > 0; n--) {
    const p = `/${segs.slice(0, n).map(escape).join('/')}`;
    if (has(value, p)) return p;
  }
  return null;
}

/** Pointers of `value` at or under `pointer`. */
function heldUnder(value: JsonObject, pointer: string): string[] {
  return leafPointers(value).filter((p) => p === pointer || p.startsWith(`${pointer}/`));
}

/**
 * The settings of one version: `defaults` ⊕ each layer in order. Each layer is first checked
 * as an override (partial) against the version's schema and what does not fit is left out; the
 * merged result is then checked whole, and as long as it fails, the overrides at or under each
 * failing place are left out too, the higher layer first. `defaults` satisfy the schema, so this
 * ends, at worst with the defaults alone.
 */
export function resolveSettings(defaults: JsonObject, layers: readonly Layer[], validator: SettingsValidator): Resolved {
  const ignored = new Set<string>();
  const kept: Layer[] = layers.map((layer) => {
    let overrides = layer.overrides;
    for (let round = 0; round < 64; round++) {
      const errors = validator.partialErrors(overrides);
      if (errors.length === 0) break;
      for (const e of errors) {
        const at = errorPointer(e);
        if (at === '') {
          for (const leaf of leafPointers(overrides)) ignored.add(leaf);
          overrides = {};
          break;
        }
        const p = heldAt(overrides, at);
        if (p === null) continue; // already left out with a key above it
        ignored.add(p);
        overrides = without(overrides, p);
      }
    }
    return { source: layer.source, overrides };
  });

  const merge = () => kept.reduce((acc, layer) => mergeSettings(acc, layer.overrides), clone(defaults));
  let settings = merge();
  for (let round = 0; round < 64; round++) {
    const errors = validator.fullErrors(settings);
    if (errors.length === 0) return { settings, sources: sourcesOf(settings, kept), ignored: [...ignored].sort() };
    let dropped = false;
    for (const e of errors) {
      const at = errorPointer(e);
      // The highest layer that set something at or under the failing place gives it up.
      for (let i = kept.length - 1; i >= 0; i--) {
        const layer = kept[i]!;
        const held = heldAt(layer.overrides, at);
        const under = held !== null ? [held] : heldUnder(layer.overrides, at);
        if (under.length === 0) continue;
        for (const p of under) {
          ignored.add(p);
          layer.overrides = without(layer.overrides, p);
        }
        dropped = true;
        break;
      }
    }
    if (!dropped) break;
    settings = merge();
  }
  // Nothing left to attribute the failure to: the defaults alone (which satisfy the schema).
  for (const layer of kept) for (const p of leafPointers(layer.overrides)) ignored.add(p);
  const bare = clone(defaults);
  return { settings: bare, sources: sourcesOf(bare, []), ignored: [...ignored].sort() };
}
