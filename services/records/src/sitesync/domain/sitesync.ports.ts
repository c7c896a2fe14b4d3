/**
 * What site sync needs from storage (docs/sitesync.md); store/sitesync.repository.ts.
 */
import type { OutboxEvent } from '../../kernel/domain/record.ports.js';
import type { Site, SiteKind, SiteState, StateFilter, StateKey, StatusCounts } from './sitesync.types.js';

/** A state as a claim or a lapse left it, and what happened to it (docs/sitesync.md). */
export interface MovedState {
  state: SiteState;
  /** Its lease had run out: it counted an attempt (and was queued again, failed, or claimed at once). */
  lapsed: boolean;
  /** When it lapsed: the agent whose lease ran out. */
  lapsedAgent: string | null;
  /** Claimed by this statement: the index of its lease among the digests handed in. */
  leaseIndex: number | null;
}

/** What a claim asks the store: one statement (store/sitesync.repository.ts). */
export interface ClaimInput {
  site: string;
  agent: string;
  /** One digest per state that may be claimed (at most `limit`), in claim order. */
  leaseDigests: readonly Buffer[];
  leaseSeconds: number;
  maxAttempts: number;
  /** Error kept on a state whose lease ran out. */
  lapseError: string;
  /**
   * The user whose membership decides which projects' states may be claimed (membershipOf,
   * kernel/domain/project.readers.ts); null: every project's.
   */
  reader: string | null;
}

/** A report's change, applied only while `leaseDigest` is the state's current, unexpired lease. */
export interface ReportChange {
  key: StateKey;
  leaseDigest: Buffer;
  status: 'in_progress' | 'synced' | 'failed';
  progress?: number;
  size?: number;
  totalSize?: number;
  error?: string;
  maxAttempts: number;
  /** As ClaimInput's: a state of a project this user may not read is not changed. */
  reader: string | null;
}

/** The statements of one site sync transaction; row locks hold until it ends. */
export interface SiteSyncTransaction {
  /** Creates the site or changes it; `changed` false (and nothing written) when it already held these values. */
  upsertSite(site: {
    id: string;
    code: string;
    name: string;
    kind: SiteKind;
    root: string | null;
  }): Promise<{ site: Site; created: boolean; changed: boolean }>;
  /** The site, locked for update (a delete), or key-shared (a request naming it), or undefined. */
  lockSite(code: string, mode: 'update' | 'share'): Promise<Site | undefined>;
  deleteSite(code: string): Promise<void>;
  /** States naming the site, whatever their status. */
  countStatesOf(site: string): Promise<number>;
  /**
   * Live Representations among `ids` with their project, key-share locked until the end; those in a
   * project `reader` (membershipOf's user id; null: every project) may not read are not among them.
   */
  liveRepresentations(ids: readonly string[], reader: string | null): Promise<{ id: string; projectId: string | null }[]>;
  /**
   * Queues each representation on `site` that has no state there, or whose state is not one of
   * `keep` (fresh attempts, this priority); returns only the states it wrote.
   */
  requestStates(
    reps: readonly { id: string; projectId: string | null }[],
    site: string,
    priority: number,
    keep: readonly string[],
  ): Promise<{ state: SiteState; created: boolean }[]>;
  /** Claims up to `leaseDigests.length` states of the site in one statement (docs/sitesync.md, "The claim"). */
  claim(input: ClaimInput): Promise<MovedState[]>;
  /** Returns run-out leases to queued (or failed at the last attempt): of one state, or any (up to `limit`). */
  lapse(scope: { key: StateKey } | { limit: number }, maxAttempts: number, lapseError: string): Promise<SiteState[]>;
  /** Applies a report when its lease is current; undefined when it is not (or there is no state). */
  report(change: ReportChange): Promise<SiteState | undefined>;
  /** The state, locked for update; none when `reader` may not read its project. */
  findState(key: StateKey, reader: string | null): Promise<SiteState | undefined>;
  /** Sets status and priority, ends any lease; `resetAttempts` for a manual retry. */
  setState(key: StateKey, status: string, priority: number, resetAttempts: boolean): Promise<SiteState>;
  /** Adds events to the records outbox; published after the commit. */
  appendEvents(events: readonly OutboxEvent[]): Promise<void>;
}

/** What site sync needs from storage; store/sitesync.repository.ts via KnexRecordStore. */
export interface SiteSyncStore {
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  siteSyncTransaction<T>(fn: (tx: SiteSyncTransaction) => Promise<T>): Promise<T>;
  listSites(): Promise<Site[]>;
  findSite(code: string): Promise<Site | undefined>;
  /** The state; none when `reader` may not read its project. */
  findState(key: StateKey, reader: string | null): Promise<SiteState | undefined>;
  /** At most `limit` states after `after` in (representation_id, site) order, of projects `reader` may read. */
  listStates(filter: StateFilter, after: StateKey | undefined, limit: number, reader: string | null): Promise<SiteState[]>;
  /** States per status, of projects `reader` may read. */
  countStates(filter: Pick<StateFilter, 'projectId' | 'site'>, reader: string | null): Promise<StatusCounts>;
}
