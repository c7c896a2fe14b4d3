/**
 * Who may read a project (docs/api-notes.md, "Restricted projects"). A project whose `restricted`
 * is true is read only by Admins and by the Users its `members` list; for anyone else the
 * project and every record in it do not exist. Open projects and studio-wide records (project
 * null) are read by everyone.
 *
 * Whose membership a call is judged by is lib-platform's membershipOf; kernel/store/project.readers.sql.ts
 * writes the one SQL condition every read, write and feed of records applies with it.
 */

/** Whose membership decides (lib-platform's policy, shared with the gateway's event-stream filter). */
export { membershipOf } from '@reelbase/lib-platform';

/** The value bound into the SQL condition: a jsonb list that a `members` list holding the user contains. */
export function membershipProbe(userId: string): string {
  return JSON.stringify([{ id: userId }]);
}

/** A restricted project's readers as records keeps them (the `ListRestrictedProjects` RPC). */
export interface RestrictedProject {
  id: string;
  memberIds: string[];
}
