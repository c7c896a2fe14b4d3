/**
 * What the schema rules need from outside, as ports: the definition store (PostgreSQL,
 * store/), the records service (records/), and the test-only fault switch (faults/).
 */
import type { StreamEvent } from '@reelbase/lib-platform';
import type { ProjectOverrides } from './catalog.js';
import type { RenamePlan } from './schema.editor.js';
import type { SchemaDoc, SchemaUsage } from './schema.types.js';

/** A rename journal entry: written with the renamed definitions, done once records cascaded it. */
export interface JournalEntry extends RenamePlan {
  id: string;
  /** Who asked for the rename (the event's actor). */
  actor: string | null;
}

/** What one committed change writes besides the new document. */
export interface Commit<R> {
  doc: SchemaDoc;
  events: StreamEvent[];
  journal?: JournalEntry;
  result: R;
}

export interface SchemaStore {
  /** The current document. */
  load(): Promise<SchemaDoc>;
  /** The current version (one row). */
  version(): Promise<number>;
  /**
   * Locks the definitions (every replica), reads the document and runs `change` on it. When it
   * returns a commit, saves its document at the next version with its events (outbox) and its
   * journal entry in one transaction and returns it with that version; null leaves all as it was.
   * `beforeCommit` runs inside that transaction, once everything is written and before it commits
   * (the definitions still locked); when it throws, nothing is committed.
   */
  commit<R>(change: (doc: SchemaDoc) => Commit<R> | null, beforeCommit?: (out: Commit<R>) => Promise<void>): Promise<Commit<R> | null>;
  /** Journal entries whose cascade has not been recorded as done, oldest first. */
  pendingRenames(): Promise<JournalEntry[]>;
  /**
   * Marks the entry done with the records it rewrote and writes its event in the same
   * transaction; false (and nothing written) when it was already done.
   */
  finishRename(id: string, rewritten: number, event: StreamEvent): Promise<boolean>;
}

export interface RecordsPort {
  /**
   * Hands records the snapshot of `version` (ignored there when it already has a newer one). With
   * `refuseRemovedInUse`, records refuses it (409 `code_in_use`) when a code it removes is still used
   * by a record, counted under the lock record writes hold.
   */
  applySchema(version: number, snapshotJson: string, opts?: { refuseRemovedInUse?: boolean }): Promise<void>;
  /** Rewrites the renamed code in every record; idempotent per entry id; the records rewritten. */
  applyRename(entry: JournalEntry): Promise<number>;
  countUsage(): Promise<SchemaUsage>;
  /** The project's `data.overrides` (null when it has none); not_found when there is no such project. */
  projectOverrides(projectId: string): Promise<ProjectOverrides | null>;
}

/** Test-only crash points (SCHEMA_FAULT). */
export interface SchemaFaults {
  /** After a rename's journal entry (with the renamed definitions) committed, before the cascade. */
  afterJournal(): void;
}
