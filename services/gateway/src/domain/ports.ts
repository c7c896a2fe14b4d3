/**
 * What the gateway's domain needs from the adapters around it (docs/architecture.md, "Service
 * template"): declared here, implemented in live/ (the in-process bus fed from NATS).
 */

/** A revoked API key and/or a user whose tokens must be re-checked; or every login token (signing keys retired). */
export interface Revocation {
  api_key_id?: string | null;
  user_id?: string | null;
  /** Every signing key but the newest was retired at once: every login token must be re-checked. */
  all_tokens?: boolean;
}

/** What the auth cache listens to: revocations, and each change of a User (its role, its state). */
export interface AuthChanges {
  /** Calls `revocation` for each revocation and `userChanged` for each changed User; returns the unsubscribe function. */
  subscribe(listener: { revocation(r: Revocation): void; userChanged(userId: string): void }): () => void;
}

/** A restricted project and the users its `members` lists (records' ListRestrictedProjects). */
export interface RestrictedProjectEntry {
  id: string;
  memberIds: readonly string[];
}

/** Reads every restricted project with its members from records, as the gateway itself. */
export type RestrictedProjectsSource = () => Promise<readonly RestrictedProjectEntry[]>;

/** A Project event as it arrives live: which project, and the fields it changed. */
export interface ProjectChange {
  projectId: string;
  action: string;
  changes: Readonly<Record<string, unknown>>;
}

/** What the project access map listens to: each Project event that reaches this gateway. */
export interface ProjectChanges {
  /** Calls `listener` for each Project event; returns the unsubscribe function. */
  subscribe(listener: (change: ProjectChange) => void): () => void;
}
