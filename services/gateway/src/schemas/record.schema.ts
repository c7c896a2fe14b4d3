/**
 * Records routes' schemas (docs/api-notes.md, Records): path parameters, create and patch bodies, and the
 * record as returned.
 */
import { z } from 'zod';
import { EntityTypeCode, JsonObject, RecordData, Role, Uuid } from './common.schema.js';

export const EntityTypePath = z.strictObject({ entity_type: EntityTypeCode });

export const RecordPath = z.strictObject({ entity_type: EntityTypeCode, id: Uuid });

const NullableUuid = Uuid.nullable().optional();
const NullableString = z.string().min(1).max(255).nullable().optional();

export const RecordCreate = z
  .strictObject({
    project_id: NullableUuid.describe('Required for every type except Project, User and studio-wide custom types.'),
    status: NullableString.describe('A status code valid for the type.'),
    active: z.boolean().optional().describe('Defaults to true.'),
    thumbnail_id: NullableUuid,
    data: RecordData.default({}).describe(
      "The type's fields, by code; link ids are lower-cased. A Project's `restricted` (boolean, default false) and `members` " +
        '(Users) decide who reads it: when restricted, only Admins and its members; for anyone else the project and ' +
        'everything in it do not exist (404, left out of lists, events and notifications; docs/api-notes.md, "Restricted projects").',
    ),
    task_template: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("A task template code of the record's type: its tasks are created with the record, in the same transaction (unknown: 422)."),
  })
  .meta({ id: 'RecordCreate', description: 'Body of POST /entities/{entity_type}.' });

export const RecordPatch = z
  .strictObject({
    project_id: NullableUuid,
    status: NullableString,
    active: z.boolean().optional(),
    thumbnail_id: NullableUuid,
    data: RecordData.optional().describe('Merged key by key; a key set to null is removed; link ids are lower-cased.'),
  })
  .meta({ id: 'RecordPatch', description: 'Body of PATCH /entities/{entity_type}/{id}: every key optional.' });

const recordShape = {
  id: Uuid,
  entity_type: z.string(),
  project_id: Uuid.nullable(),
  status: z.string().nullable(),
  active: z.boolean(),
  thumbnail_id: Uuid.nullable(),
  created_by: Uuid.nullable(),
  created_at: z.string().describe('ISO 8601 UTC.'),
  updated_at: z.string().describe('ISO 8601 UTC with microseconds; also the ETag.'),
  data: JsonObject,
};

export const RecordOut = z.object(recordShape).meta({ id: 'Record', description: 'One record (universal store).' });

export const RecordRetired = z
  .object({ id: Uuid, entity_type: z.string(), retired: z.literal(true) })
  .meta({ id: 'RecordRetired', description: 'Answer of DELETE: the record is retired (soft delete) and can be revived.' });

export const MeOut = z
  .object({ ...recordShape, role: Role, auth: z.enum(['token', 'api_key']) })
  .meta({ id: 'Me', description: "The caller's User record plus its role and how the caller authenticated." });

/** Headers documented on single-record responses. */
export const etagHeader = {
  ETag: { description: 'The quoted `updated_at`; send it back in If-Match to write only an unchanged record.', schema: { type: 'string' } },
};
