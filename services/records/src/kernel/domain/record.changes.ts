/**
 * Pure functions behind every write: parsing `data`, merging a PATCH into it, and computing
 * the flat `changes` object of the event (docs/api-notes.md, Events).
 */
import { AppError } from '@reelbase/lib-platform';
import type { DataObject, RecordView } from './record.types.js';

/** The record columns that appear in events, by their names in events. */
export const EVENT_COLUMNS = ['project_id', 'status', 'active', 'thumbnail_id'] as const;
export type EventColumn = (typeof EVENT_COLUMNS)[number];

/** The value of an event column on `r`. */
export function columnValue(r: Pick<RecordView, 'projectId' | 'status' | 'active' | 'thumbnailId'>, c: EventColumn): unknown {
  switch (c) {
    case 'project_id':
      return r.projectId;
    case 'status':
      return r.status;
    case 'active':
      return r.active;
    case 'thumbnail_id':
      return r.thumbnailId;
  }
}

/**
 * Parses `json` as the record's data. An empty or absent string is `{}`; anything but a JSON
 * object is a validation problem at `["body","data"]`.
 */
export function parseData(json: string | undefined): DataObject {
  if (json === undefined || json.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw AppError.invalid([{ loc: ['data'], msg: 'Input should be a valid JSON object', type: 'json_invalid' }]);
  }
  if (!isPlainObject(value)) {
    throw AppError.invalid([{ loc: ['data'], msg: 'Input should be a valid dictionary', type: 'dict_type' }]);
  }
  return value;
}

/** True for `{...}` (not arrays, not null). */
export function isPlainObject(v: unknown): v is DataObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Structural equality of JSON values. Object key order does not matter, because jsonb does
 * not keep it either.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as DataObject;
  const bo = b as DataObject;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

/**
 * Merges `patch` into `current` key by key: a `null` removes the key, any other value
 * replaces it. Returns the new object and the keys that really changed (removed ones as null).
 */
export function mergeData(current: DataObject, patch: DataObject): { data: DataObject; changed: DataObject } {
  const data: DataObject = { ...current };
  const changed: DataObject = {};
  for (const [key, value] of Object.entries(patch)) {
    const had = Object.prototype.hasOwnProperty.call(current, key);
    if (value === null) {
      if (had) {
        delete data[key];
        changed[key] = null;
      }
    } else if (!had || !jsonEqual(current[key], value)) {
      data[key] = value;
      changed[key] = value;
    }
  }
  return { data, changed };
}

/** The null-free form of a new data object: a `null` value on create means "not set". */
export function dropNulls(data: DataObject): DataObject {
  return Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null));
}

/** `changes` of a create (or revive): every set column and every data field. */
export function createChanges(r: RecordView): DataObject {
  const changes: DataObject = {};
  for (const c of EVENT_COLUMNS) {
    const v = columnValue(r, c);
    if (v !== null && v !== undefined) changes[c] = v;
  }
  return { ...changes, ...r.data };
}

/**
 * `changes` of an update: the columns whose value differs between `before` and `after`, then
 * the data fields that changed. Empty when the update changes nothing.
 */
export function updateChanges(before: RecordView, after: RecordView, dataChanged: DataObject): DataObject {
  const changes: DataObject = {};
  for (const c of EVENT_COLUMNS) {
    const a = columnValue(before, c);
    const b = columnValue(after, c);
    if (a !== b) changes[c] = b;
  }
  return { ...changes, ...dataChanged };
}
