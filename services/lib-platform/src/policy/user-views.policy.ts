/**
 * Who may read a user's tasks and timesheet, and which timesheet ranges are valid
 * (docs/api-notes.md, "Work views"). The gateway applies both before it calls records (a quick
 * 403 or 422); records applies them again to every call it answers.
 */
import type { Principal } from '../context.js';
import type { Problem } from '../problems.js';
import { mayLogTimeForOthers } from './timelog.policy.js';

/** Why reading another user's tasks or timesheet is refused. */
export const USER_VIEWS_NOT_YOURS = "only the user, an Admin, a Supervisor or a Coordinator may read a user's tasks and timesheet";

/** True when `p` may read the tasks and timesheet of `userId`: the user, Admin, Supervisor, Coordinator (or a service). */
export function mayReadUserViews(p: Pick<Principal, 'role' | 'authKind' | 'userId'>, userId: string): boolean {
  if (mayLogTimeForOthers(p)) return true;
  return p.userId !== '' && p.userId.toLowerCase() === userId.toLowerCase();
}

/** The widest timesheet one call may ask for, in days (both ends included): a year, leap day included. */
export const MAX_TIMESHEET_DAYS = 366;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a `YYYY-MM-DD` calendar date, or undefined when it is not one. */
export function dayNumber(value: string): number | undefined {
  const m = DATE.exec(value);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March (and years below 100 into the 1900s): a date that
  // does not come back unchanged is not one.
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return undefined;
  return ms / 86_400_000;
}

/**
 * The problems of a timesheet range, located in the query string: a missing or malformed date
 * names its own parameter; `from` after `to`, or a range wider than {@link MAX_TIMESHEET_DAYS},
 * names `from`.
 */
export function timesheetRangeProblems(from: string | undefined, to: string | undefined): Problem[] {
  const problems: Problem[] = [];
  const a = from === undefined ? undefined : dayNumber(from);
  const b = to === undefined ? undefined : dayNumber(to);
  const bad = (name: string, value: string | undefined): Problem =>
    value === undefined || value === ''
      ? { loc: ['query', name], msg: 'Field required', type: 'missing' }
      : { loc: ['query', name], msg: 'Input should be a valid date in the format YYYY-MM-DD', type: 'date_parsing' };
  if (a === undefined) problems.push(bad('from', from));
  if (b === undefined) problems.push(bad('to', to));
  if (a === undefined || b === undefined) return problems;
  if (a > b) problems.push({ loc: ['query', 'from'], msg: '`from` must not be after `to`', type: 'value_error' });
  else if (b - a + 1 > MAX_TIMESHEET_DAYS) {
    problems.push({ loc: ['query', 'from'], msg: `a timesheet covers at most ${MAX_TIMESHEET_DAYS} days`, type: 'value_error' });
  }
  return problems;
}
