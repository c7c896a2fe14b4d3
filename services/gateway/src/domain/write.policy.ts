/**
 * Who may write what (docs/api-notes.md, "Roles and who may write"). Runs before body
 * validation, so it reads the raw body defensively.
 */
import { AppError, fieldWriteRefusal, mayWriteTimeLogOf, TIME_LOG_NOT_YOURS } from '@reelbase/lib-platform';
import type { AuthedPrincipal } from './authed.principal.js';

export type WriteOp = 'create' | 'update' | 'delete' | 'revive';

const ADMIN_ONLY: ReadonlySet<string> = new Set(['Project', 'User']);
/** Publishing, notes and own time: open to every authenticated role. */
const ANY_ROLE: ReadonlySet<string> = new Set(['Version', 'Product', 'Representation', 'Note', 'TimeLog']);

function dataOf(body: unknown): Record<string, unknown> | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const data = (body as Record<string, unknown>).data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  return data as Record<string, unknown>;
}

const forbidden = (why: string) => new AppError('forbidden', why);

/** Throws 403 unless `principal` may perform `op` on a record of `entityType`. */
export function assertMayWrite(principal: AuthedPrincipal, entityType: string, op: WriteOp, body: unknown): void {
  assertRoleMayWrite(principal, entityType, op, body);
  // Fields no person writes (a Representation's transcode fields, a Note's verdict, guest_name
  // and another user as author), Admin included. Who wrote a stored Note, and whether a
  // Playlist has a live share link, only records knows; it answers those 403s itself.
  const data = op === 'create' || op === 'update' ? dataOf(body) : undefined;
  const why = data && fieldWriteRefusal(principal, entityType, data);
  if (why) throw forbidden(why);
}

function assertRoleMayWrite(principal: AuthedPrincipal, entityType: string, op: WriteOp, body: unknown): void {
  const role = principal.role;
  if (role === 'Admin') return;
  if (ADMIN_ONLY.has(entityType)) throw forbidden(`only an Admin may write ${entityType} records`);
  // `role` is a User field, so role changes are covered by User writes being Admin only;
  // other types may define a field of that name freely.
  if (entityType === 'TimeLog') {
    // An explicit data.user naming someone else is refused here, before validation. Whose an
    // existing TimeLog is (update, delete, revive) only records knows; it answers 403 itself.
    const data = op === 'create' || op === 'update' ? dataOf(body) : undefined;
    if (data && Object.hasOwn(data, 'user') && !mayWriteTimeLogOf(principal, data.user)) throw forbidden(TIME_LOG_NOT_YOURS);
    return;
  }
  if (ANY_ROLE.has(entityType)) return;
  if (role === 'Viewer') throw forbidden(`a Viewer may not write ${entityType} records`);
}
