/**
 * The body and answer of `POST /entities/{entity_type}/query` (docs/api-notes.md, Queries). The gateway
 * checks the body's shape; the records service checks the filter itself against the schema (every
 * path, operator and value) and locates each problem inside `filters`.
 */
import { entityPolicy } from '@reelbase/lib-platform';
import { z } from 'zod';
import { RecordOut } from './record.schema.js';

const Group = z
  .strictObject({
    filter_operator: z.enum(['all', 'any']),
    filters: z.array(z.unknown()).describe('Conditions and nested groups.'),
  })
  .describe('A group: all (every item holds) or any (at least one does).');

export const Filter = z
  .union([z.array(z.unknown()).describe('Conditions and groups that must all hold.'), Group])
  .describe(
    'ShotGrid-style filter. A condition is `[path, operator, value]` or `[path, "between"|"not_between", low, high]` ' +
      '(`in_last`/`in_next`: `[path, op, n, "HOUR"|"DAY"|"WEEK"|"MONTH"]`). A path is a column (`id`, `project_id`, ' +
      '`status`, `active`, `created_by`, `created_at`, `updated_at`, `thumbnail_id`, `entity_type`), a field, or ' +
      '`field.Type.path` through a link or multi_link (at most 4 hops, e.g. `entity.Shot.sequence.Sequence.code`). ' +
      'Groups nest at most 8 deep. Operators: `is`, `is_not`, `in`, `not_in`, `less_than`, `greater_than`, ' +
      '`less_or_equal`, `greater_or_equal`, `between`, `not_between`, `contains`, `not_contains`, `starts_with`, ' +
      '`ends_with` (text, case-insensitive), `type_is`, `type_is_not` (links), `in_last`, `in_next` (dates). ' +
      'Negative operators also match records where the field is empty; `in []` matches nothing, `not_in []` everything.',
  );

export const QueryOrder = z.strictObject({
  field: z.string().min(1).max(64).describe('A column or a data field of the type (not json, multi_enum, link or multi_link).'),
  direction: z.enum(['asc', 'desc']).default('asc'),
});

export const QueryBody = z
  .strictObject({
    filters: Filter,
    fields: z.array(z.string().min(1).max(64)).max(500).optional().describe('The data fields to return (columns always come); absent: all.'),
    order: z
      .array(QueryOrder)
      .max(entityPolicy.MAX_ORDER_KEYS)
      .optional()
      .describe('Sort keys; `id` always ends the order (default: `id` ascending, i.e. creation).'),
    limit: z
      .int()
      .min(1)
      .max(entityPolicy.MAX_LIMIT)
      .optional()
      .describe(`Records per page, 1..${entityPolicy.MAX_LIMIT} (default ${entityPolicy.DEFAULT_LIMIT}).`),
    cursor: z.string().max(16384).nullable().optional().describe('The `next_cursor` of the previous page of this same query.'),
    include_total: z.boolean().optional().describe('Also count every match (`total`).'),
    include_retired: z.boolean().optional().describe('Admin only (403 otherwise): also return retired records.'),
  })
  .meta({ id: 'QueryBody', description: 'Body of POST /entities/{entity_type}/query.' });

export const QueryOut = z
  .object({
    items: z.array(RecordOut),
    next_cursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
    total: z.number().int().optional().describe('Every match, when `include_total` was true.'),
  })
  .meta({ id: 'QueryPage', description: 'One keyset page of a query: stable under concurrent inserts.' });
