/**
 * Records in their client form (docs/api-notes.md, Records). The `data` object arrives from records as JSON
 * text and is spliced into the response unparsed: the hot path never parses and
 * re-serialises it.
 */
import { AppError } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';

/** The ETag of a record: its `updated_at`, quoted. */
export function etagOf(r: recordsv1.Record): string {
  return `"${r.updatedAt}"`;
}

/** The record as JSON text; `extra` keys (already JSON-safe) are appended after `data`. */
export function recordJson(r: recordsv1.Record, extra?: Record<string, unknown>): string {
  const head = JSON.stringify({
    id: r.id,
    entity_type: r.entityType,
    project_id: r.projectId ?? null,
    status: r.status ?? null,
    active: r.active,
    thumbnail_id: r.thumbnailId ?? null,
    created_by: r.createdBy ?? null,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  });
  const tail = extra ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  return `${head.slice(0, -1)},"data":${r.dataJson || '{}'}${tail}}`;
}

/** `{"items": [...records], ...extra}` as JSON text (a work view, a page), the records' data never re-parsed. */
export function recordsJson(records: readonly recordsv1.Record[], extra?: Record<string, unknown>): string {
  const tail = extra ? `,${JSON.stringify(extra).slice(1, -1)}` : '';
  return `{"items":[${records.map((r) => recordJson(r)).join(',')}]${tail}}`;
}

/**
 * A single-record answer: the record as JSON text (with `extra` keys, as recordJson) and its ETag;
 * a missing record is records' fault (500).
 */
export function recordAnswer(record: recordsv1.Record | undefined, extra?: Record<string, unknown>): { json: string; etag: string } {
  if (!record) throw new AppError('internal', 'records answered without a record');
  return { json: recordJson(record, extra), etag: etagOf(record) };
}

/** The record as an object (for bodies that nest it). */
export function recordObject(r: recordsv1.Record): Record<string, unknown> {
  return JSON.parse(recordJson(r)) as Record<string, unknown>;
}

const pick = (o: Record<string, unknown>, snake: string, camel: string): unknown => o[snake] ?? o[camel];

/**
 * A record JSON-encoded by another service (auth's `user_json`) → client form. Accepts the
 * client form itself or the proto message's JSON (snake or camel case, `data_json` text).
 */
export function recordFromJsonText(text: string): Record<string, unknown> {
  const o = JSON.parse(text) as Record<string, unknown>;
  const dataJson = pick(o, 'data_json', 'dataJson');
  const data = typeof dataJson === 'string' ? (JSON.parse(dataJson || '{}') as unknown) : (o.data ?? {});
  return {
    id: o.id,
    entity_type: pick(o, 'entity_type', 'entityType'),
    project_id: pick(o, 'project_id', 'projectId') ?? null,
    status: o.status ?? null,
    active: o.active ?? true,
    thumbnail_id: pick(o, 'thumbnail_id', 'thumbnailId') ?? null,
    created_by: pick(o, 'created_by', 'createdBy') ?? null,
    created_at: pick(o, 'created_at', 'createdAt'),
    updated_at: pick(o, 'updated_at', 'updatedAt'),
    data,
  };
}
