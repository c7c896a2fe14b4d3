/**
 * What the events domain and the log writer need from outside, as ports: reads of the event log,
 * and the writer's session on it (PostgreSQL, store/).
 */
import type { StreamEvent } from '@reelbase/lib-platform';
import type { AppendPlan } from './append.plan.js';
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

/** The result of one committed append. */
export interface AppendResult extends AppendPlan {
  /** created_at of each appended row, formatted by the database, in row order. */
  createdAt: string[];
}

/** Thrown when the log holds ids this writer did not expect (another writer wrote). */
export class StaleWriterError extends Error {
  override readonly name = 'StaleWriterError';
}

/**
 * The one writer's hold on the log (store/writer.session.ts): a connection holding the writer lock,
 * on which every append runs, so a writer that lost its lock cannot commit.
 */
export interface LogWriterSession {
  /** The error that ended the session's connection, or null while it is alive. */
  readonly lost: Error | null;
  /** Resolves with the error once the connection is gone. */
  whenLost(): Promise<Error>;
  /** The highest id in the log (0 when empty). */
  maxId(): Promise<number>;
  /** A round trip, so a dead connection is noticed while the stream is quiet. */
  ping(): Promise<void>;
  /** Appends `events` after id `last` (events already logged consume no id); resolves once committed. */
  append(last: number, events: readonly StreamEvent[]): Promise<AppendResult>;
  /** Gives the lock up. */
  close(): Promise<void>;
}

/** Opens writer sessions: null when another replica holds the writer lock. */
export type LogWriterSessions = () => Promise<LogWriterSession | null>;
