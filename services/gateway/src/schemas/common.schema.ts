/**
 * Shared zod schemas: identifiers, codes and the two error bodies (docs/api-notes.md, Errors). Schemas with
 * a meta `id` become `components.schemas` entries of the OpenAPI document.
 */
import { OutboundUrl, canonicalLinks, schemaBodies } from '@reelbase/lib-platform';
import { z } from 'zod';

/**
 * A UUID (any version; ids are v7 but older or imported ids must still resolve), lower-cased
 * once here so that an id re-sent in another case is the same id everywhere behind the gateway.
 */
export const Uuid = z.guid().overwrite((s) => s.toLowerCase());

/** An entity type code such as `Shot` or a custom object code; a role. */
export const { EntityTypeCode, Role } = schemaBodies;

/** Where the service POSTs to (actions, scheduled webhooks): lib-platform's policy, which the schema service applies too. */
export { OutboundUrl };

/** A bound of a policy (lib-platform's policy/): an integer from `min` to `max`, `default` when absent. */
export interface IntRange {
  min: number;
  max: number;
  default: number;
}

/** A body's integer within `r`, `r.default` when absent. */
export const boundedInt = (r: IntRange) => z.number().int().min(r.min).max(r.max).default(r.default);

/** A query parameter's integer within `r` (read from its text), `r.default` when absent. */
export const queryInt = (r: IntRange) => z.coerce.number().int().min(r.min).max(r.max).default(r.default);

/** `min..max (default d)`, as descriptions give a range. */
export const rangeText = (r: IntRange) => `${r.min}..${r.max} (default ${r.default})`;

/** A number as descriptions write it: `100,000`. */
export const count = (n: number) => n.toLocaleString('en-US');

/** A JSON object with arbitrary keys. */
export const JsonObject = z.record(z.string(), z.unknown());

/** A record's `data`: the id of every link `{"type","id"}` in it is lower-cased like {@link Uuid}. */
export const RecordData = JsonObject.overwrite((data) => canonicalLinks(data));

/** Every non-422 error body. */
export const ErrorBody = z
  .object({
    detail: z.string().describe('A human sentence.'),
    code: z.string().describe('Machine code: unauthenticated, forbidden, not_found, stale_write, rate_limited, ...'),
    usage: z.number().int().optional().describe('With code_in_use: how many records use the code.'),
  })
  .meta({ id: 'Error', description: 'Every error other than 422.' });

export const ValidationProblem = z
  .object({
    loc: z.array(z.union([z.string(), z.number().int()])).describe('Starts with body, query or path.'),
    msg: z.string(),
    type: z
      .string()
      .describe('missing, extra_forbidden, string_type, uuid_parsing, json_invalid, ...; too_many_errors on the entry that counts problems left out'),
  })
  .meta({ id: 'ValidationProblem' });

/** The 422 body: every problem at once. */
export const ValidationErrorBody = z.object({ detail: z.array(ValidationProblem) }).meta({
  id: 'ValidationError',
  description:
    'Request validation failure (FastAPI shape). At most 100 problems are listed (`MAX_PROBLEMS`); when there were ' +
    'more, a last entry `{"loc": ["body"], "msg": "<n> more problems not listed …", "type": "too_many_errors"}` counts the rest. ' +
    'Echoed input is clipped: a `loc` part keeps 200 characters, a `msg` 400, then `…`.',
});
