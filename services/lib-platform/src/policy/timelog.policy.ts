/**
 * Own time (docs/api-notes.md, Roles and who may write): any role may log, change and remove
 * its own TimeLogs; a TimeLog of another user needs one of {@link TIME_LOG_ADMIN_ROLES}. The
 * owner is `data.user`, a link `{"type":"User","id":…}` (a bare id is read the same way).
 * Services acting on their own behalf are not people and are not restricted. The gateway
 * applies this to the body before validation (a quick 403); records applies it to the stored
 * record, which only it can see.
 */
import type { Principal, Role } from '../context.js';

/** Roles that may write time for another user. */
export const TIME_LOG_ADMIN_ROLES: ReadonlySet<Role> = new Set<Role>(['Admin', 'Supervisor', 'Coordinator']);

/** Why a TimeLog write for another user is refused. */
export const TIME_LOG_NOT_YOURS = 'only an Admin, Supervisor or Coordinator may write time for another user';

/** The user id a `data.user` value names: a link's `id`, a bare id, or undefined. */
export function timeLogOwner(user: unknown): string | undefined {
  if (typeof user === 'string') return user;
  if (user !== null && typeof user === 'object' && typeof (user as { id?: unknown }).id === 'string') {
    return (user as { id: string }).id;
  }
  return undefined;
}

/** True when `p` may write TimeLogs of any user. */
export function mayLogTimeForOthers(p: Pick<Principal, 'role' | 'authKind' | 'userId'>): boolean {
  return TIME_LOG_ADMIN_ROLES.has(p.role as Role) || (p.authKind === 'service' && !p.userId);
}

/** True when `p` may write a TimeLog whose `data.user` is `user`. Ids compare case-insensitively. */
export function mayWriteTimeLogOf(p: Pick<Principal, 'role' | 'authKind' | 'userId'>, user: unknown): boolean {
  if (mayLogTimeForOthers(p)) return true;
  const owner = timeLogOwner(user);
  return owner !== undefined && p.userId !== '' && owner.toLowerCase() === p.userId.toLowerCase();
}
