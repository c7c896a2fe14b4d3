/**
 * The one write transaction every contender performs: a record row and its outbox row,
 * committed together. pgbench and the Express baseline run these exact statement texts
 * (pgbench with the parameters written in as literals), so the only differences between
 * them are the client and the protocol, never the SQL.
 *
 * Ids are UUID v7 like the records service's (which makes them in Node; here SQL makes
 * them, so pgbench can run the very same text). Time-ordered ids keep primary-key inserts
 * at the right edge of the index; random v4 ids would cost more page splits and
 * write-ahead log, which would flatter the gateway.
 */
import { sqlIsoMicros } from '@reelbase/lib-platform';

/** UUID v7 from `gen_random_uuid()`: 48-bit millisecond timestamp, version bits 0111. */
export const UUID_V7_SQL =
  "encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6), 52, 1), 53, 1), 'hex')::uuid";

const ts = sqlIsoMicros;

/**
 * Columns returned for the created record (the body a client gets back), formatted as the
 * records service returns them (timestamps with microseconds).
 */
export const RECORD_COLUMNS =
  `id, entity_type, project_id, status, active, thumbnail_id, created_by, ` +
  `${ts('created_at')} AS created_at, ${ts('updated_at')} AS updated_at, retired_at IS NOT NULL AS retired, data`;

/** Refuses a schema name that would need quoting (it is written into the SQL text). */
function schemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`unsafe schema name: ${schema}`);
  return schema;
}

/**
 * The record insert into `<schema>.record`: $1 entity_type, $2 project_id, $3 created_by,
 * $4 data (JSON text).
 */
export function insertRecordSql(schema: string): string {
  return (
    `INSERT INTO ${schemaName(schema)}.record (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data) ` +
    `SELECT ${UUID_V7_SQL}, $1::text, $2::uuid, NULL, true, NULL, $3::uuid, c.ts, c.ts, $4::jsonb FROM (SELECT clock_timestamp() AS ts) c RETURNING ${RECORD_COLUMNS}`
  );
}

/**
 * The outbox insert into `<schema>.outbox`: $1 subject, $2 entity_type, $3 entity_id,
 * $4 project_id, $5 actor, $6 changes (JSON text). The payload has the event's shape
 * (event_id, entity_type, entity_id, project_id, action, actor, changes, occurred_at); the
 * event id appears in the column and in the payload.
 */
export function insertOutboxSql(schema: string): string {
  return (
    `INSERT INTO ${schemaName(schema)}.outbox (event_id, subject, payload) ` +
    `SELECT ev.id, $1::text, jsonb_build_object('event_id', ev.id, 'entity_type', $2::text, 'entity_id', $3::uuid, ` +
    `'project_id', $4::uuid, 'action', 'create', 'actor', $5::uuid, 'changes', $6::jsonb, 'occurred_at', now()) ` +
    `FROM (SELECT ${UUID_V7_SQL} AS id) ev`
  );
}

/** What one create writes, before ids are generated. */
export interface CreateInput {
  entityType: string;
  projectId: string | null;
  actor: string | null;
  data: Record<string, unknown>;
}

/** NATS subject of a create event (unprefixed: the relay adds the run's prefix when it publishes). */
export function createSubject(entityType: string): string {
  return `events.${entityType}.create`;
}

/** `changes` of a create: every set column and every data field, flat. */
export function createChanges(input: CreateInput): Record<string, unknown> {
  const changes: Record<string, unknown> = { active: true, ...input.data };
  if (input.projectId !== null) changes.project_id = input.projectId;
  return changes;
}

/** Parameters of insertRecordSql. */
export function recordParams(input: CreateInput): (string | null)[] {
  return [input.entityType, input.projectId, input.actor, JSON.stringify(input.data)];
}

/** Parameters of insertOutboxSql for the record whose id is `recordId`. */
export function outboxParams(input: CreateInput, recordId: string): (string | null)[] {
  return [createSubject(input.entityType), input.entityType, recordId, input.projectId, input.actor, JSON.stringify(createChanges(input))];
}

/** A PostgreSQL string literal (standard_conforming_strings on), or NULL. */
export function sqlLiteral(value: string | null): string {
  return value === null ? 'NULL' : `'${value.replace(/'/g, "''")}'`;
}

/**
 * Writes SQL text into `$n` placeholders (each value already SQL: a literal, NULL or a
 * pgbench `:variable`). Placeholders are replaced in one pass, so a value that contains
 * `$2` is never substituted again.
 */
export function bindText(sql: string, values: readonly string[]): string {
  return sql.replace(/\$(\d+)/g, (whole, n: string) => {
    const v = values[Number(n) - 1];
    if (v === undefined) throw new Error(`no value for ${whole}`);
    return v;
  });
}
