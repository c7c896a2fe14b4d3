/**
 * The `records.outbox` table: appended to by writes (inside their transaction, or as a part of
 * the one statement that writes their rows), drained in `seq` order by lib-platform's outbox
 * relay (configured in service.ts).
 */
import { OutboxTable, type NatsNames } from '@reelbase/lib-platform';
import type { OutboxEvent } from '../domain/record.ports.js';
import type { Db } from './knex.db.js';

/** The records outbox table and the lock its relay holds. */
export const RECORDS_OUTBOX = { table: 'records.outbox', lockKey: 'records:outbox-relay' } as const;

/** The SQL of `records.outbox` (lib-platform's write kernel of outbox rows): every store statement that writes an event takes it from here. */
export const recordsOutbox = new OutboxTable(RECORDS_OUTBOX.table);

/** The payload of an event as the relay publishes it: `payload` (jsonb) with `occurred_at` set to `at`, the write's clock. */
export const stampedPayload = (payload: string, at: string): string => `${payload} || jsonb_build_object('occurred_at', ${at})`;

/** The outbox row of an event: published on `events.<Type>.<action>`. */
export function outboxRow(names: NatsNames, event: OutboxEvent): { subject: string; eventId: string; json: string } {
  const { payload } = event;
  return { subject: names.eventSubject(payload.entity_type, payload.action), eventId: payload.event_id, json: event.json };
}

/** Statements on `records.outbox` made by writes. */
export class OutboxRepository {
  /** Appends the event of a write (`json` is its payload serialised); call inside the write's transaction. */
  append(db: Db, subject: string, eventId: string, json: string): Promise<void> {
    return recordsOutbox.append(db, subject, eventId, json);
  }
}
