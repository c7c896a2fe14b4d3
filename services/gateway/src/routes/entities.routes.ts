/**
 * Generic record routes (docs/api-notes.md, Records): create, read, patch, retire and revive. One gRPC call
 * each; the record's data travels as JSON text and is never re-parsed on the way out.
 */
import { normalizeIfMatch } from '@reelbase/lib-platform';
import { keyedAnswer } from '../http/idempotency.js';
import { localsOf } from '../http/locals.js';
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { createRecordRequest, queryPageJson, queryRecordsRequest, updateRecordRequest } from '../mappers/entity.mapper.js';
import { recordAnswer } from '../mappers/record.mapper.js';
import { EntityTypePath, RecordCreate, RecordOut, RecordPatch, RecordPath, RecordRetired, etagHeader } from '../schemas/record.schema.js';
import { QueryBody, QueryOut } from '../schemas/query.schema.js';
import type { RouteDeps } from './route.deps.js';
import { writesRecord } from './route.roles.js';
import { PROJECT } from '../domain/project.access.js';

/** The single-record answer: the record as JSON text with its ETag. */
function recordReply(record: Parameters<typeof recordAnswer>[0]): Reply {
  const { json, etag } = recordAnswer(record);
  return Reply.rawJson(json, 200, { etag });
}

/**
 * `If-Match: "<updated_at>"` → the bare value records compares; `*` → any current record; absent →
 * no condition; empty or malformed → a condition that never holds (409 `stale_write`).
 */
const ifMatchOf = normalizeIfMatch;

const etagResponse = (description: string) => ({ description, schema: RecordOut, headers: etagHeader });

const IF_MATCH = {
  name: 'If-Match',
  description:
    'The record\'s quoted ETag (`"<updated_at>"`, or a comma-separated list of ETags): the write applies only if the record ' +
    'is unchanged (its ETag is one of them), else 409 `stale_write` and nothing changes. An empty or malformed value never ' +
    'matches (409 `stale_write`). `*` matches any current record (RFC 9110); only an absent header means no condition.',
  schema: { type: 'string' },
};

const USER = 'User';

/** The narrower rules of the types a share link shows (docs/api-notes.md, "Roles and who may write"). */
const REVIEW_RULES =
  ' A Representation’s `transcode_status`, `transcode_error`, `review_kind`, `review_media_key`, ' +
  '`thumbnail_media_key` and `attempts` are written by the media service only: a body naming one is 403 for ' +
  'every role, before validation (`name`, `version` and `files` stay open to every role). A Note’s `author` is ' +
  'the caller (set on create; naming anyone else is 403); its `verdict` and `guest_name` are written only ' +
  'through `POST /shared/{token}/notes` (403). A Playlist’s `versions` hold Versions of its own project only ' +
  '(422 `link_project` at the element).';

export function entityRoutes({ peers, userChanged, access }: RouteDeps): AnyRoute[] {
  const records = peers.records;
  /**
   * A User write changes who may do what: every gateway must forget the user before we answer. A
   * Project write may change who reads it: this gateway reads the map again before we answer (the
   * others on its event).
   */
  const afterWrite = async (entityType: string, id: string): Promise<void> => {
    // Principals carry the canonical (lower-case) id, whatever spelling the path used.
    if (entityType === USER) await userChanged(id.toLowerCase());
    if (entityType === PROJECT) await access.refresh(true);
  };
  return [
    defineRoute({
      method: 'post',
      path: '/entities/{entity_type}',
      operationId: 'createRecord',
      summary: 'Create a record of a type.',
      description:
        'Project and User records: Admin only. Version, Product, Representation, Note and TimeLog: any role (a TimeLog ' +
        "for another user needs Admin, Supervisor or Coordinator). Every other type: any role but Viewer. A User's " +
        '`data.email` is its login address: taken by another user, 409 `duplicate_code`; the new user cannot log in ' +
        'until an Admin sets a password (`PUT /auth/users/{id}/password`). The record obeys the schema: a type it ' +
        'does not have is 404; `status`, `project_id` and every `data` key are checked against the type (all ' +
        'problems in one 422, nothing written). `task_template` also creates that template’s tasks in the same ' +
        'transaction.' +
        REVIEW_RULES,
      tags: ['entities'],
      auth: 'bearer',
      params: EntityTypePath,
      body: RecordCreate,
      // A User is written by auth: its key is claimed and finished around the call.
      keyInWrite: (params) => params.entity_type !== USER,
      authorize: writesRecord('create'),
      responses: { 200: etagResponse('The created record.') },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx, res }) => {
        // The Idempotency-Key the create carries (keyInWrite): records claims it, writes and stores the answer.
        const create = createRecordRequest(params.entity_type, body, localsOf(res).keyedWrite);
        // A User's data.email is its login address: auth reserves it and writes the record (docs/architecture.md, "Auth decisions").
        if (params.entity_type === USER) return recordReply((await peers.auth.createUser({ record: create }, ctx)).record);
        const created = await records.createRecord(create, ctx);
        await afterWrite(params.entity_type, created.record?.id ?? '');
        return keyedAnswer(created.key, () => recordReply(created.record));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/entities/{entity_type}/query',
      // Read-only: an Idempotency-Key is checked, never stored.
      replayable: false,
      operationId: 'queryRecords',
      summary: 'Find records of a type with a filter, in keyset pages.',
      description:
        'Any authenticated user (Viewers included). The filter is compiled to parameterised SQL: every path, operator ' +
        'and value is checked against the schema, and each problem is a 422 whose `loc` points into the filter ' +
        '(`["body","filters",1,0]`). A type the schema does not have: 404. Retired records are never returned unless ' +
        '`include_retired` is true (Admin only, else 403). Pages are keyset pages: paging while others insert returns ' +
        'every record that existed when paging began exactly once.',
      tags: ['entities'],
      auth: 'bearer',
      params: EntityTypePath,
      body: QueryBody,
      responses: { 200: { description: 'One page of matching records.', schema: QueryOut } },
      errors: [403, 404, 503],
      handler: async ({ params, body, ctx }) => {
        return Reply.rawJson(queryPageJson(await records.queryRecords(queryRecordsRequest(params.entity_type, body), ctx)));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/entities/{entity_type}/{id}',
      operationId: 'getRecord',
      summary: 'Read one record (retired records: 404).',
      tags: ['entities'],
      auth: 'bearer',
      params: RecordPath,
      responses: { 200: etagResponse('The record.') },
      errors: [404, 503],
      handler: async ({ params, ctx }) => recordReply((await records.getRecord({ entityType: params.entity_type, id: params.id }, ctx)).record),
    }),
    defineRoute({
      method: 'patch',
      path: '/entities/{entity_type}/{id}',
      operationId: 'updateRecord',
      summary: 'Update a record; `data` is merged key by key (null removes a key).',
      description:
        'With `If-Match: "<updated_at>"` the write applies only if the record is unchanged, else 409 `stale_write`. ' +
        'User records (and so roles) are Admin only; a TimeLog of another user needs Admin, Supervisor or Coordinator. ' +
        "Changing a User's `data.email` moves its login to the new address (the old one stops working); an address " +
        'another user has is 409 `duplicate_code` and nothing changes; `data.email` null is 422; while another ' +
        "change of the same User's email is still being applied, 409 `email_change_pending` (retry). The keys set are " +
        'checked against the schema (422); a status change the type’s transitions do not allow for the caller’s role ' +
        'is 409 `transition_not_allowed`.' +
        REVIEW_RULES +
        ' A Note is edited by its author, an Admin or a Supervisor; a guest’s note by nobody (403). While a Playlist ' +
        'has a live share link, changing its `versions` needs Admin, Supervisor or Coordinator (403).',
      tags: ['entities'],
      auth: 'bearer',
      params: RecordPath,
      headerParams: [IF_MATCH],
      body: RecordPatch,
      authorize: writesRecord('update'),
      responses: { 200: etagResponse('The updated record.') },
      errors: [404, 409, 503],
      handler: async ({ params, body, ctx, req }) => {
        const patch = updateRecordRequest(params.entity_type, params.id, body, ifMatchOf(req.headers['if-match']));
        // Setting a User's data.email moves its login: auth writes record and credential together.
        const movesLogin = params.entity_type === USER && body.data !== undefined && Object.hasOwn(body.data, 'email');
        const res = movesLogin ? await peers.auth.updateUser({ record: patch }, ctx) : await records.updateRecord(patch, ctx);
        await afterWrite(params.entity_type, params.id);
        return recordReply(res.record);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/entities/{entity_type}/{id}',
      operationId: 'retireRecord',
      summary: 'Retire a record (soft delete; revive restores it).',
      description:
        'Answers 200 `{"id","entity_type","retired": true}`. Honours `If-Match` like PATCH. A Note is retired by its ' +
        'author, an Admin or a Supervisor; a guest’s note by an Admin, Supervisor or Coordinator (403 otherwise).',
      tags: ['entities'],
      auth: 'bearer',
      params: RecordPath,
      headerParams: [IF_MATCH],
      authorize: writesRecord('delete'),
      responses: { 200: { description: 'Retired.', schema: RecordRetired } },
      errors: [404, 409, 503],
      handler: async ({ params, ctx, req }) => {
        await records.retireRecord({ entityType: params.entity_type, id: params.id, ifMatch: ifMatchOf(req.headers['if-match']) }, ctx);
        await afterWrite(params.entity_type, params.id);
        return { id: params.id, entity_type: params.entity_type, retired: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/entities/{entity_type}/{id}/revive',
      operationId: 'reviveRecord',
      summary: 'Restore a retired record.',
      description: 'Whoever may retire the record may revive it (a Note: see DELETE).',
      tags: ['entities'],
      auth: 'bearer',
      params: RecordPath,
      authorize: writesRecord('revive'),
      responses: { 200: etagResponse('The revived record.') },
      errors: [404, 409, 503],
      handler: async ({ params, ctx }) => {
        const res = await records.reviveRecord({ entityType: params.entity_type, id: params.id }, ctx);
        await afterWrite(params.entity_type, params.id);
        return recordReply(res.record);
      },
    }),
  ];
}
