/**
 * What the events domain needs from outside, as ports: reads of the event log (PostgreSQL,
 * store/).
 */
import type { ListQuery } from './list.query.js';

/** A log row as read, with `changes` still as JSON text. */
export interface StoredEvent {
  id: number;
  entityType: string;
  entityId: string;
  projectId: string | null;
  action: string;
  actor: string | null;
  changesJson: string;
  createdAt: string;
}

export interface EventPage {
  items: StoredEvent[];
  lastId: number;
  /** The byte budget ended the page before `limit` rows: more matching rows follow the last one. */
  truncated: boolean;
}

/** Reads of the event log. */
export interface EventLogReader {
  /**
   * One page of the log (see {@link ListQuery}) and the highest id in the log. The page holds
   * at most `limit` rows and stops early (`truncated`) once the next row would take it past the
   * byte budget; `lastId` is never below an id in the page.
   */
  list(q: ListQuery): Promise<EventPage>;
}
