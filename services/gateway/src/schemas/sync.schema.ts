/**
 * Sync routes' schemas (docs/api-notes.md, "Sync").
 */
import { syncPolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { EntityTypeCode, JsonObject, Uuid } from './common.schema.js';
import { RecordOut } from './record.schema.js';

const Source = z.string().regex(syncPolicy.SYNC_SOURCE).describe('The other tracker, as mappings name it (`shotgrid`, `kitsu`, `ftrack-main`).');
const ExternalId = z.string().min(1).max(syncPolicy.SYNC_MAX_EXTERNAL_ID).describe("The record's id in the other tracker.");

export const SyncImportItem = z
  .strictObject({
    external_id: ExternalId,
    entity_type: EntityTypeCode,
    project_external_id: ExternalId.optional().describe('The Project by its external id (in this batch or imported earlier from the same source).'),
    project_id: Uuid.optional(),
    status: z.string().nullable().optional(),
    data: JsonObject.describe(
      'As in a create or PATCH (merged key by key into an existing record; null removes a key). A link may name its target ' +
        '`{"type","external_id"}` (resolved through the mappings of the source or another item of this batch, in any order) or `{"type","id"}`.',
    ),
  })
  .superRefine((item, ctx) => {
    if (item.project_id !== undefined && item.project_external_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['project_id'], message: 'Give either project_id or project_external_id, not both' });
    }
  })
  .meta({ id: 'SyncImportItem' });

export const SyncImportBody = z
  .strictObject({
    source: Source,
    items: z
      .array(SyncImportItem)
      .min(1)
      .max(syncPolicy.SYNC_MAX_ITEMS)
      .describe(`1..${syncPolicy.SYNC_MAX_ITEMS} items, upserted by (source, entity_type, external_id).`),
    dry_run: z.boolean().optional().describe('Check and answer, write nothing.'),
  })
  .meta({ id: 'SyncImportBody' });

export const SyncImportOut = z
  .object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    items: z.array(
      z.object({
        external_id: z.string(),
        entity_type: z.string(),
        id: Uuid,
        result: z.enum(['created', 'updated', 'unchanged']),
      }),
    ),
  })
  .meta({ id: 'SyncImportResult' });

export const SyncMappingsQuery = z.strictObject({
  source: Source.optional(),
  entity_type: EntityTypeCode.optional(),
  external_id: ExternalId.optional(),
  id: Uuid.optional().describe('The record: every mapping of it (one per source).'),
});

export const SyncMapping = z.object({ source: z.string(), entity_type: z.string(), external_id: z.string(), id: Uuid }).meta({ id: 'SyncMapping' });

export const SyncMappingList = z.object({ items: z.array(SyncMapping) }).meta({ id: 'SyncMappingList' });

export const SyncChangesQuery = z.strictObject({
  after: z.coerce.number().int().min(0).default(0).describe('An event id (`next_after` of the previous page); 0: from the start.'),
  project_id: Uuid.optional(),
  source: Source.optional().describe("Leave out the writes made by this source's imports (no echo)."),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1..1000 events looked at.'),
});

export const SyncChange = z
  .object({
    event_id: z.number().int(),
    action: z.enum(['create', 'update', 'delete']),
    entity_type: z.string(),
    id: Uuid,
    record: RecordOut.nullable().describe('The record as it is now; null once retired.'),
    external_ids: z.record(z.string(), z.string()).describe('source → external id.'),
  })
  .meta({ id: 'SyncChange' });

export const SyncChangeList = z
  .object({
    items: z.array(SyncChange),
    next_after: z.number().int().describe('Send back as `after` for the next page (the last event looked at; unchanged when none).'),
  })
  .meta({ id: 'SyncChangeList' });
