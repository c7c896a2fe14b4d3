/**
 * Own time (contract 8): any role may log, change and remove its own TimeLogs; a TimeLog of
 * another user needs Admin, Supervisor or Coordinator. The owner is `data.user`, a link
 * `{"type":"User","id":…}` (a bare id is read the same way). Services acting on their own
 * behalf are not people and are not restricted.
 */
import { AppError, type Principal } from '@reelbase/lib-platform';
import type { DataObject } from './record.types.js';

const TIME_ADMINS: ReadonlySet<string> = new Set(['Admin', 'Supervisor', 'Coordinator']);

/** The user id a `data.user` value names, if any. */
export function timeLogOwner(user: unknown): string | undefined {
  if (typeof user === 'string') return user;
  if (user !== null && typeof user === 'object' && typeof (user as { id?: unknown }).id === 'string') {
    return (user as { id: string }).id;
  }
  return undefined;
}

function mayLogForOthers(p: Principal): boolean {
  return TIME_ADMINS.has(p.role) || (p.authKind === 'service' && !p.userId);
}

const notYours = () => new AppError('forbidden', 'only an Admin, Supervisor or Coordinator may write time for another user');

/** A new TimeLog: the caller's own unless the caller may log for others. */
export function checkTimeLogCreate(p: Principal, data: DataObject): void {
  if (mayLogForOthers(p)) return;
  if (data.user === undefined || data.user === null) {
    throw AppError.invalid([{ loc: ['body', 'data', 'user'], msg: 'Field required: the user whose time this is (yourself)', type: 'missing' }]);
  }
  if (timeLogOwner(data.user) !== p.userId) throw notYours();
}

/** A change, retirement or revival of an existing TimeLog (and, for a patch, its new owner). */
export function checkTimeLogChange(p: Principal, current: DataObject, next?: DataObject): void {
  if (mayLogForOthers(p)) return;
  if (timeLogOwner(current.user) !== p.userId) throw notYours();
  if (next && timeLogOwner(next.user) !== p.userId) throw notYours();
}
