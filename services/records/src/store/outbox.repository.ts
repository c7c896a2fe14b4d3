/**
 * The `records.outbox` table: appended to by writes (inside their transaction), drained in
 * `seq` order by lib-platform's outbox relay (configured in service.ts).
 */
import { OutboxTable } from '@reelbase/lib-platform';
import type { Db } from './record.repository.js';

/** The records outbox table and the lock its relay holds. */
export const RECORDS_OUTBOX = { table: 'records.outbox', lockKey: 'records:outbox-relay' } as const;

/** Statements on `records.outbox` made by writes. */
export class OutboxRepository {
  private readonly table = new OutboxTable(RECORDS_OUTBOX.table);

  /** Appends the event of a write (`json` is its payload serialised); call inside the write's transaction. */
  append(db: Db, subject: string, eventId: string, json: string): Promise<void> {
    return this.table.append(db, subject, eventId, json);
  }
}
