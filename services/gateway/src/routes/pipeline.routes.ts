/**
 * What pipeline code calls besides single records (docs/api-notes.md, "Batches" and "Summaries"):
 * `POST /batch` (records' BatchRecords: one transaction, the events consecutive in the log) and
 * `POST /entities/{entity_type}/summarize` (records' SummarizeRecords: aggregates in SQL, the
 * filter compiled by the query compiler). Both answer records' JSON as it is.
 */
import { keyedAnswer } from '../http/idempotency.js';
import { localsOf } from '../http/locals.js';
import { Reply, defineRoute, type AnyRoute } from '../http/route.js';
import { BatchBody, BatchBodyDoc, BatchOut, SummarizeBody, SummarizeOut } from '../schemas/pipeline.schema.js';
import { EntityTypePath } from '../schemas/record.schema.js';
import type { RouteDeps } from './route.deps.js';
import { PROJECT } from '../domain/project.access.js';

/** What a summary weighs in the caller's rate limit: it aggregates a whole type (docs/api-notes.md, "Rate limits"). */
export const SUMMARY_COST = 10;

export function pipelineRoutes({ peers, access }: RouteDeps): AnyRoute[] {
  const records = peers.records;
  return [
    defineRoute({
      method: 'post',
      path: '/batch',
      // A batch counts its requests in the caller's rate limit.
      cost: (body) => body.requests.length,
      // Its Idempotency-Key travels with it: claimed, and the answer stored in the batch's transaction.
      keyInWrite: true,
      operationId: 'batch',
      summary: 'Create, update and retire records in one transaction, all or nothing.',
      description:
        'Requests run in order, each checked exactly as its single route checks it (`POST /entities/{entity_type}`, `PATCH` and ' +
        '`DELETE /entities/{entity_type}/{id}`: who may write the type and its fields, the schema, links, transitions, existence). ' +
        'The first request that fails decides the one answer and nothing is written: a 422 listing that request’s problems with ' +
        '`loc` `["body","requests",i,...]`, or its 403, 404 or 409 with `"index": i` in the error body. A later request sees what ' +
        'the earlier ones wrote. User records are written one at a time (422 at `entity_type`). Each write is an ordinary ' +
        'event, and the events of one batch are consecutive in the log. A batch whose events together exceed the event size ' +
        'limit is 413 (split it). Batches writing the same records at once, in any order, wait for each other (a batch locks the ' +
        'records it updates or deletes in id order first); one PostgreSQL still aborts for colliding with another writer runs ' +
        'once more, and a second abort is 409 `concurrent_change` with nothing written (send it again).',
      tags: ['entities'],
      auth: 'bearer',
      body: BatchBody,
      docBody: BatchBodyDoc,
      responses: { 200: { description: 'The results, in request order.', schema: BatchOut } },
      errors: [403, 404, 409, 413, 503],
      handler: async ({ body, ctx, res }) => {
        const r = await records.batchRecords({ requestsJson: JSON.stringify(body.requests), keyed: localsOf(res).keyedWrite }, ctx);
        // A Project written may change who reads it: this gateway reads the map again before the answer.
        if (body.requests.some((q) => (q as { entity_type?: unknown } | null)?.entity_type === PROJECT)) await access.refresh(true);
        return keyedAnswer(r.key, () => Reply.rawJson(r.json));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/entities/{entity_type}/summarize',
      // Read-only: an Idempotency-Key is checked, never stored. A summary reads a whole type.
      replayable: false,
      cost: () => SUMMARY_COST,
      operationId: 'summarizeRecords',
      summary: 'Summaries of the records a filter matches, grouped up to three levels.',
      description:
        'Any role. `filters` is the query language of `POST /entities/{entity_type}/query`, validated the same way (422 `loc` inside ' +
        '`filters`); retired records are left out. Summary types: `record_count` (records matched; any field, e.g. `id`), `count` ' +
        '(non-empty values), `sum` and `average` (numbers), `minimum` and `maximum` (numbers, dates, text), `earliest` and `latest` ' +
        '(dates and timestamps), `status_list` (the sorted distinct values), `percentage` (with `value`: 0..100, the share of records ' +
        'whose field equals it). One summary per field (a second on the same field: 422). Grouping levels: `exact` (a link gives ' +
        '`group_value` `{"type","id"}` and `group_name` the target’s code, else name), `day`, `week` (ISO), `month`, `year`; groups ' +
        'ordered by value (link groups by name) in `direction`, the group without a value (`group_value` null) always last. A type ' +
        'the schema does not have: 404.',
      tags: ['entities'],
      auth: 'bearer',
      params: EntityTypePath,
      body: SummarizeBody,
      responses: { 200: { description: 'The summaries and groups.', schema: SummarizeOut } },
      errors: [404, 503],
      handler: async ({ params, body, ctx }) =>
        Reply.rawJson(
          (
            await records.summarizeRecords(
              {
                entityType: params.entity_type,
                filtersJson: JSON.stringify(body.filters),
                summaryFieldsJson: JSON.stringify(body.summary_fields),
                groupingJson: body.grouping === undefined ? undefined : JSON.stringify(body.grouping),
              },
              ctx,
            )
          ).json,
        ),
    }),
  ];
}
