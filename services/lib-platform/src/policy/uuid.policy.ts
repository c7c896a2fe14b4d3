/**
 * One spelling per id. UUIDs are compared as text in places (`changes`, `data` links, ETag-
 * guarded no-op detection), so an id re-sent in upper case must not count as a change: the
 * gateway lower-cases every UUID it validates (path, query, body columns and the `id` of
 * every link inside `data`) and records does the same for callers that reach it directly.
 */
import { isUuid } from '../ids.js';
import { isEntityTypeCode } from './entity-type.policy.js';

/** `v` lower-cased when it is a UUID string; anything else unchanged. */
export function canonicalUuid<T>(v: T): T {
  return (isUuid(v) ? v.toLowerCase() : v) as T;
}

/** True for a link value: `{"type": "<EntityType>", "id": "<uuid>", ...}`. */
export function isLink(v: unknown): v is { type: string; id: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return isEntityTypeCode(o.type) && isUuid(o.id);
}

/**
 * `value` with the `id` of every link in it lower-cased, at any depth (links, multi_link
 * arrays, links inside json fields). Returns `value` itself when nothing needed changing, so
 * the common case allocates nothing.
 */
export function canonicalLinks<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const c = canonicalLinks(item);
      if (c !== item) (out ??= [...value])[i] = c;
    });
    return (out ?? value) as T;
  }
  const o = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  if (isLink(o) && o.id !== o.id.toLowerCase()) out = { ...o, id: o.id.toLowerCase() };
  for (const [k, v] of Object.entries(o)) {
    if (k === 'id' && out) continue;
    const c = canonicalLinks(v);
    if (c !== v) (out ??= { ...o })[k] = c;
  }
  return (out ?? value) as T;
}
