/**
 * Restricted projects for the integration specs of the reader rule (docs/api-notes.md, "Restricted
 * projects"): a Project's `restricted` and `members` written as an Admin's PATCH stores them.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type pg from 'pg';
import type { RecordsWorld } from './records.world.js';

/** A new Project record (by `ctx`, an Admin), its id. */
export async function project(world: RecordsWorld, code: string, ctx: CallContext): Promise<string> {
  return (await world.client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: code, code }) }, ctx)).record!.id;
}

/** An open project and a secret one restricted to `members`, made by `ctx` (an Admin). */
export async function openAndSecret(world: RecordsWorld, members: readonly string[], ctx: CallContext): Promise<{ open: string; secret: string }> {
  const open = await project(world, 'open', ctx);
  const secret = await project(world, 'secret', ctx);
  await restrict(world.sql, secret, members);
  return { open, secret };
}

/** Restricts `projectId` to the users `members` (or, with `restricted` false, opens it again). */
export async function restrict(sql: pg.Client, projectId: string, members: readonly string[], restricted = true): Promise<void> {
  await sql.query(`update records.record set data = data || jsonb_build_object('restricted', $2::boolean, 'members', $3::jsonb) where id = $1`, [
    projectId,
    restricted,
    JSON.stringify(members.map((id) => ({ type: 'User', id }))),
  ]);
}
