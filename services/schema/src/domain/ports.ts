/**
 * What the schema rules need from outside, as ports: the definition store (PostgreSQL,
 * store/), the records service (records/), and the test-only fault switch (outbox/).
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

/** The ports of the actions (docs/architecture.md, "Actions"). */
export type * from './actions/actions.ports.js';
/** The ports of the scheduler (docs/architecture.md, "Scheduler"). */
export type * from './scheduler/scheduler.ports.js';
// ─── addons (domain/addons/, docs/architecture.md "Addons") ────────────────────────────────

/** One registered version of an addon, as stored (immutable). */
export interface AddonVersion {
  name: string;
  version: string;
  title: string;
  settings_schema: Record<string, unknown>;
  defaults: Record<string, unknown>;
  /** sha256 of the canonical body: tells a repeated PUT from a different one, keys compiled validators. */
  digest: string;
  created_at: string;
}

/** An addon: its production version and the versions registered (in no particular order). */
export interface AddonHead {
  name: string;
  production_version: string;
  versions: { version: string; title: string }[];
}

/** What one settings read needs, read together (one statement). */
export interface AddonSettingsInputs {
  production_version: string;
  /** The project's pin (null without a project or a pin). */
  pin: string | null;
  /** The version read (the one asked for, else the pin, else production); undefined when it does not exist. */
  version: AddonVersion | undefined;
  studio: Record<string, unknown> | null;
  project: Record<string, unknown> | null;
}

/** The addon tables inside one transaction that holds the addon's lock (every write of one addon queues on it). */
export interface AddonTx {
  head(): Promise<AddonHead | undefined>;
  version(version: string): Promise<AddonVersion | undefined>;
  /** Stores a version; creates the addon with it as the production version when the addon is new. */
  insertVersion(v: Omit<AddonVersion, 'created_at'>): Promise<AddonVersion>;
  deleteVersion(version: string): Promise<void>;
  setProduction(version: string): Promise<void>;
  /** How many projects pin `version`. */
  pinCount(version: string): Promise<number>;
  /** The override layer of the studio (null project) or of a project; undefined when never set. */
  overrides(projectId: string | null): Promise<Record<string, unknown> | undefined>;
  putOverrides(projectId: string | null, overrides: Record<string, unknown>): Promise<void>;
  /** The project's pinned version; undefined when it never pinned, null when unpinned. */
  pin(projectId: string): Promise<string | null | undefined>;
  setPin(projectId: string, version: string | null): Promise<void>;
  /** Appends an event to the schema outbox, committed with the change. */
  append(event: StreamEvent): Promise<void>;
}

export interface AddonStore {
  list(): Promise<AddonHead[]>;
  head(name: string): Promise<AddonHead | undefined>;
  version(name: string, version: string): Promise<AddonVersion | undefined>;
  /** Undefined when the addon does not exist. */
  settingsInputs(name: string, projectId: string | null, version: string | null): Promise<AddonSettingsInputs | undefined>;
  /** Runs `fn` in one transaction holding the addon's lock; the events it appended are emitted after the commit. */
  change<R>(name: string, fn: (tx: AddonTx) => Promise<R>): Promise<R>;
}

/** Whether a project exists (a live Project record), asked of records. */
export interface ProjectDirectory {
  projectExists(projectId: string): Promise<boolean>;
}
