/**
 * Who may read a project (docs/api-notes.md, "Restricted projects"). A project whose `restricted`
 * is true is read only by Admins and by the Users its `members` list; for anyone else the
 * project and every record in it do not exist. Open projects and studio-wide records (project
 * null) are read by everyone.
 *
 * This file decides whose membership a call is judged by; kernel/store/project.readers.sql.ts
 * writes the one SQL condition every read, write and feed of records applies with it.
 */
import type { Principal } from '@reelbase/lib-platform';

/**
 * The user whose membership decides what `principal` may read, or null when it reads every
 * project: an Admin, a service acting for itself, and a share-link guest (whose reach is the
 * shared playlist, checked by the share rules). An API key acts as its user.
 */
export function membershipOf(principal: Principal | undefined): string | null {
  if (!principal) return null;
  if (principal.role === 'Admin' || principal.role === 'Service' || principal.role === 'Guest') return null;
  if (principal.authKind === 'service') return null;
  return principal.userId;
}

/** The value bound into the SQL condition: a jsonb list that a `members` list holding the user contains. */
export function membershipProbe(userId: string): string {
  return JSON.stringify([{ id: userId }]);
}

/** A restricted project's readers as records keeps them (the `ListRestrictedProjects` RPC). */
export interface RestrictedProject {
  id: string;
  memberIds: string[];
}
