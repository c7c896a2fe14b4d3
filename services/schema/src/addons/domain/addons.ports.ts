/**
 * What the addons need from outside, as ports (docs/architecture.md, "Addons"): the addon tables
 * (PostgreSQL, store/) and whether a project exists (records, records/).
 */
import type { StreamEvent } from '@reelbase/lib-platform';

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
