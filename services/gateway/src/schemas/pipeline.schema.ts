/**
 * Bodies and answers of the routes pipeline code calls besides single records (docs/api-notes.md,
 * "Batches" and "Summaries"). A batch's requests are checked by records one by one, in order (so
 * the first request that fails decides the answer): the gateway checks only the list around them,
 * and documents each request's shape with {@link BatchRequest}.
 */
import { entityPolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { EntityTypeCode, JsonObject, Uuid } from './common.schema.js';
import { Filter } from './query.schema.js';
import { RecordOut } from './record.schema.js';

export const { BATCH_MAX } = entityPolicy;

export const BatchRequest = z
  .strictObject({
    request_type: z.enum(['create', 'update', 'delete']),
    entity_type: EntityTypeCode,
    entity_id: Uuid.optional().describe('The record an update or delete acts on (required for them).'),
    project_id: Uuid.nullable().optional().describe('As in a create or PATCH body (not for a delete).'),
    status: z.string().min(1).max(255).nullable().optional().describe('As in a create or PATCH body (not for a delete).'),
    data: JsonObject.optional().describe('A create’s fields, or a PATCH’s keys to merge (null removes a key); not for a delete.'),
  })
  .meta({ id: 'BatchRequest', description: 'One request of a batch: a create, a PATCH or a DELETE of one record.' });

/** What the gateway validates: 1..BATCH_MAX requests; each is checked by records, in order. */
export const BatchBody = z.strictObject({
  requests: z.array(z.unknown()).min(1).max(BATCH_MAX),
});

/** What the OpenAPI document shows. */
export const BatchBodyDoc = z
  .strictObject({
    requests: z.array(BatchRequest).min(1).max(BATCH_MAX),
  })
  .meta({ id: 'BatchBody', description: `Body of POST /batch: 1 to ${BATCH_MAX} requests, run in order in one transaction.` });

export const BatchOut = z
  .object({
    results: z.array(z.union([RecordOut, z.literal(true)])).describe('In request order: the record a create or update wrote, `true` for a delete.'),
  })
  .meta({ id: 'BatchResults', description: 'The answer of a batch that committed.' });

export const SummaryField = z.strictObject({
  field: z.string().min(1).max(64).describe('A column or a data field of the type; one summary per field.'),
  type: z.enum(entityPolicy.SUMMARY_TYPES),
  value: z.unknown().optional().describe('A percentage’s value: the share of records whose field equals it (required for a percentage only).'),
});

export const GroupingLevel = z.strictObject({
  field: z.string().min(1).max(64).describe('A column or a data field: a link, a scalar, or a date, datetime or timestamp.'),
  type: z.enum(entityPolicy.GROUPING_TYPES).default('exact').describe('`day`, `week`, `month`, `year` apply to dates.'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

export const SummarizeBody = z
  .strictObject({
    filters: Filter.default([]),
    summary_fields: z.array(SummaryField).min(1).max(entityPolicy.MAX_SUMMARY_FIELDS),
    grouping: z.array(GroupingLevel).max(entityPolicy.MAX_GROUPING).optional().describe('Up to three levels.'),
  })
  .meta({ id: 'SummarizeBody', description: 'Body of POST /entities/{entity_type}/summarize.' });

export const SummaryGroupOut: z.ZodType = z
  .object({
    group_name: z.string().nullable().describe('The value as text; for a link, the target’s code (else name). Null for the group without a value.'),
    group_value: z
      .unknown()
      .describe('The value; a link’s `{"type","id"}`; dates as `YYYY-MM-DD`, `YYYY-Www`, `YYYY-MM`, `YYYY`; null for records without a value (always last).'),
    summaries: JsonObject,
    get groups() {
      return z.array(SummaryGroupOut).optional().describe('The next grouping level.');
    },
  })
  .meta({ id: 'SummaryGroup' });

export const SummarizeOut = z
  .object({
    summaries: JsonObject.describe('By field: the summary over every matching record.'),
    groups: z.array(SummaryGroupOut).describe('The first grouping level (empty without grouping).'),
  })
  .meta({ id: 'Summaries', description: 'Summaries of the records a filter matches, grouped up to three levels.' });
