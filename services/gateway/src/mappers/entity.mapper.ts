/**
 * The generic record routes' bodies as records' requests (docs/api-notes.md, Records): a create,
 * a patch (absent → unchanged, null → cleared) and a query, and a query's page as JSON text.
 */
import type { idempotencyv1, recordsv1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { QueryBody } from '../schemas/query.schema.js';
import type { RecordCreate, RecordPatch } from '../schemas/record.schema.js';
import { recordsJson } from './record.mapper.js';

/** Absent → unchanged; null → cleared; a value → set. */
const nullable = (v: string | null | undefined): recordsv1.NullableString | undefined => (v === undefined ? undefined : v === null ? {} : { value: v });

/** POST /entities/{entity_type} → CreateRecord; `keyed` is the Idempotency-Key the create carries (records claims it, writes and stores the answer). */
export function createRecordRequest(
  entityType: string,
  body: z.output<typeof RecordCreate>,
  keyed?: idempotencyv1.IdempotentWrite,
): recordsv1.CreateRecordRequest {
  return {
    entityType,
    projectId: body.project_id ?? undefined,
    status: body.status ?? undefined,
    active: body.active,
    thumbnailId: body.thumbnail_id ?? undefined,
    dataJson: JSON.stringify(body.data),
    taskTemplate: body.task_template,
    keyed,
  };
}

/** PATCH /entities/{entity_type}/{id} → UpdateRecord; `ifMatch` as records compares it (normalizeIfMatch). */
export function updateRecordRequest(
  entityType: string,
  id: string,
  body: z.output<typeof RecordPatch>,
  ifMatch: string | undefined,
): recordsv1.UpdateRecordRequest {
  return {
    entityType,
    id,
    projectId: nullable(body.project_id),
    status: nullable(body.status),
    active: body.active,
    thumbnailId: nullable(body.thumbnail_id),
    dataJson: body.data === undefined ? undefined : JSON.stringify(body.data),
    ifMatch,
  };
}

/** POST /entities/{entity_type}/query → QueryRecords, the page answered as JSON text. */
export function queryRecordsRequest(entityType: string, body: z.output<typeof QueryBody>): recordsv1.QueryRecordsRequest {
  return {
    entityType,
    filtersJson: JSON.stringify(body.filters),
    fieldsJson: body.fields === undefined ? undefined : JSON.stringify(body.fields),
    order: (body.order ?? []).map((o) => ({ field: o.field, direction: o.direction })),
    limit: body.limit,
    cursor: body.cursor ?? undefined,
    includeTotal: body.include_total ?? false,
    includeRetired: body.include_retired ?? false,
    answerJson: true,
  };
}

/**
 * A query's page (`QueryOut`) as JSON text: the items as records wrote them, spliced unparsed
 * (docs/queries.md, "The request path"), or `items` from an older records.
 */
export function queryPageJson(res: recordsv1.QueryRecordsResponse): string {
  const extra = { next_cursor: res.nextCursor ?? null, ...(res.total === undefined ? {} : { total: res.total }) };
  if (res.itemsJson !== undefined) return `{"items":${res.itemsJson},${JSON.stringify(extra).slice(1)}`;
  return recordsJson(res.items, extra);
}
