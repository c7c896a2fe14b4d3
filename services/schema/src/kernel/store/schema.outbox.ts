/**
 * The schema outbox (`schema.outbox`, created by `schema-0001-initial`): every module's store writes
 * its events here in the transaction of its change, and one relay (lib-platform's `OutboxRelay`,
 * configured in service.ts) publishes them (docs/architecture.md, "The schema service").
 */
import type { Knex } from '@mikro-orm/postgresql';
import { OutboxTable, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';

/** The schema outbox table and the lock its relay holds. */
export const SCHEMA_OUTBOX = { table: 'schema.outbox', lockKey: 'schema:outbox-relay' } as const;
const outbox = new OutboxTable(SCHEMA_OUTBOX.table);

/**
 * Writes one event into the schema outbox inside `trx`. A dot would split the subject token:
 * `Schema.Status` travels as `Schema_Status` in the subject only; the payload keeps the entity type.
 */
export async function appendSchemaEvent(trx: Knex, names: NatsNames, e: StreamEvent): Promise<void> {
  await outbox.append(trx, names.eventSubject(e.entity_type.replace(/\./g, '_'), e.action), e.event_id, JSON.stringify(e));
}
