/**
 * The transactional outbox: one row per event, written in the same transaction as the
 * change it describes and deleted by the relay once JetStream has acknowledged it.
 */
import { EntitySchema } from '@mikro-orm/postgresql';

/** One event waiting to be published. */
export interface OutboxEntity {
  /** Publication order. */
  seq: string;
  /** Also the JetStream `Nats-Msg-Id`, so a re-publish after a crash is dropped. */
  eventId: string;
  subject: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

export const OutboxEntitySchema = new EntitySchema<OutboxEntity>({
  name: 'OutboxEntity',
  tableName: 'outbox',
  schema: 'records',
  properties: {
    seq: { type: 'bigint', primary: true, autoincrement: true },
    eventId: { type: 'uuid', fieldName: 'event_id', unique: true },
    subject: { type: 'text' },
    payload: { type: 'json', columnType: 'jsonb' },
    createdAt: { type: 'datetime', fieldName: 'created_at', columnType: 'timestamptz', defaultRaw: 'now()' },
  },
});
