/**
 * TimeLog ownership as records enforces it on stored records (the rule itself is
 * lib-platform's policy/timelog.policy.ts, shared with the gateway).
 */
import { AppError, mayLogTimeForOthers, mayWriteTimeLogOf, TIME_LOG_NOT_YOURS, type Principal } from '@reelbase/lib-platform';
import type { DataObject } from './record.types.js';

const notYours = () => new AppError('forbidden', TIME_LOG_NOT_YOURS);

/** A new TimeLog: the caller's own unless the caller may log for others. */
export function checkTimeLogCreate(p: Principal, data: DataObject): void {
  if (mayLogTimeForOthers(p)) return;
  if (data.user === undefined || data.user === null) {
    throw AppError.invalid([{ loc: ['data', 'user'], msg: 'Field required: the user whose time this is (yourself)', type: 'missing' }]);
  }
  if (!mayWriteTimeLogOf(p, data.user)) throw notYours();
}

/** A change, retirement or revival of an existing TimeLog (and, for a patch, its new owner). */
export function checkTimeLogChange(p: Principal, current: DataObject, next?: DataObject): void {
  if (!mayWriteTimeLogOf(p, current.user)) throw notYours();
  if (next && !mayWriteTimeLogOf(p, next.user)) throw notYours();
}
