/**
 * The event log table (`events.event_log`). Rows are only ever appended by the single
 * writer; reads and writes on the hot paths go through SQL in the repository and the
 * writer session, and this schema describes the table for the ORM.
 */
import { EntitySchema } from '@mikro-orm/postgresql';

/** One row of the log. */
export interface EventLogEntry {
  /** Global, gapless, increasing; assigned by the writer, never by a sequence. */
  id: string;
  eventId: string;
  entityType: string;
  entityId: string;
  projectId: string | null;
  action: string;
  actor: string | null;
  changes: Record<string, unknown>;
  /** When the change happened (the event's occurred_at). */
  createdAt: Date;
  /** When the row reached the log. */
  loggedAt: Date;
}

export const EventLogEntrySchema = new EntitySchema<EventLogEntry>({
  name: 'EventLogEntry',
  tableName: 'event_log',
  properties: {
    id: { type: 'bigint', primary: true, autoincrement: false },
    eventId: { type: 'uuid', fieldName: 'event_id', unique: true },
    entityType: { type: 'text', fieldName: 'entity_type' },
    entityId: { type: 'uuid', fieldName: 'entity_id' },
    projectId: { type: 'uuid', fieldName: 'project_id', nullable: true },
    action: { type: 'text' },
    actor: { type: 'uuid', nullable: true },
    changes: { type: 'json', columnType: 'jsonb' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    loggedAt: { type: 'Date', fieldName: 'logged_at', columnType: 'timestamptz', defaultRaw: 'now()' },
  },
});
