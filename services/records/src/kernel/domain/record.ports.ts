/**
 * The record as every module of the records service reads and writes it: the stored row, the
 * values a write sets, the outbox event beside it and the stored schema (docs/architecture.md,
 * "The records modules"). Each module declares its own storage ports in its `<module>.ports.ts`
 * in terms of these.
 */
import type { StreamEvent } from '@reelbase/lib-platform';
import type { DataObject, RecordView } from './record.types.js';
import type { SchemaSnapshot } from './schema.snapshot.js';
import type { LinkRef } from './schema.validator.js';

/** The schema records holds in its own table: version 0 and no snapshot until one is applied. */
export interface StoredSchema {
  version: number;
  snapshot: SchemaSnapshot;
}

/** A row as read for a write: the view plus whether it is retired. */
export interface StoredRecord extends RecordView {
  retired: boolean;
}

/** The values a write sets. */
export interface RecordValues {
  projectId: string | null;
  status: string | null;
  active: boolean;
  thumbnailId: string | null;
  data: DataObject;
}

/** A record to create: its identity plus its values. */
export interface NewRecord extends RecordValues {
  id: string;
  entityType: string;
  createdBy: string | null;
}

/** A claimed idempotency key whose answer a create stores with its record (docs/api-notes.md, "Idempotent retries"). */
export interface IdempotencyClaim {
  scope: string;
  claim: string;
}

/** An event for the outbox: `json` is `payload` encoded once (its size was checked from it). */
export interface OutboxEvent {
  payload: StreamEvent;
  json: string;
}

/** Strips the retired flag for callers. */
export function toView(r: StoredRecord): RecordView {
  const { retired: _retired, ...view } = r;
  return view;
}

/**
 * What a create was validated against: it is written only when the stored schema is still
 * `schemaVersion` and every link names a live record of the linked type.
 */
export interface WriteGuard {
  schemaVersion: number;
  links: readonly LinkRef[];
  /**
   * The user whose membership decides what the writer may read (project.readers.ts, membershipOf):
   * a project or link target they may not read counts as missing. Absent or null: every one is read.
   */
  reader?: string | null;
}

/** A project as a write finds it: live and readable by the writer, live but hidden from them, or no live Project. */
export type ProjectState = 'live' | 'hidden' | 'missing';

/** Topics of the records service's in-process bus. */
export interface RecordsBusTopics extends Record<string, unknown> {
  /** A write and its outbox row have committed. */
  committed: StreamEvent;
}
