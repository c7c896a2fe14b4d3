/**
 * Occurrences of a schedule (docs/scheduler.md, "Cron and time zones"): the cron expression is
 * parsed and stepped by croner (five fields, or `@hourly`, `@daily`, `@weekly`, `@monthly`) in
 * the schedule's IANA time zone; the daylight-saving rule is enforced here on top of what croner
 * answers:
 *
 * - an occurrence is a local wall-clock time that matches the expression;
 * - a local time that does not exist that day (the hour skipped when clocks go forward) is
 *   skipped: croner moves a fixed-time job to the first time after the gap, which does not match
 *   the expression, so it is dropped;
 * - a local time that occurs twice (the hour repeated when clocks go back) runs once, at its
 *   first instant: an instant whose wall-clock time the same zone already showed less than three
 *   hours before is dropped (croner repeats it for interval expressions such as `*\/30 * * * *`).
 */
import { AppError, cronProblem, timezoneProblem, type Problem } from '@reelbase/lib-platform';
import { Cron } from 'croner';

const HOUR_MS = 3_600_000;
/** Steps one search may take past occurrences it drops before it gives up (an expression that never matches). */
const MAX_STEPS = 1000;

/** The problems of a cron expression and a time zone, at `["body","cron"]` and `["body","timezone"]`. */
export function scheduleTimeProblems(cron: string | undefined, timezone: string | undefined): Problem[] {
  const problems: Problem[] = [];
  if (cron !== undefined) {
    const why = cronProblem(cron);
    if (why) problems.push({ loc: ['body', 'cron'], msg: why, type: 'value_error' });
  }
  if (timezone !== undefined) {
    const why = timezoneProblem(timezone);
    if (why) problems.push({ loc: ['body', 'timezone'], msg: why, type: 'value_error' });
  }
  return problems;
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(timezone: string): Intl.DateTimeFormat {
  let f = formats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formats.set(timezone, f);
  }
  return f;
}

/** The wall-clock time `at` shows in `timezone`, as the UTC milliseconds of the same fields. */
export function wallClock(at: Date, timezone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatOf(timezone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour! % 24, parts.minute!, parts.second!);
}

/** The expression of a schedule in its time zone. */
export class CronSchedule {
  private readonly cron: Cron;

  private constructor(
    readonly expression: string,
    readonly timezone: string,
  ) {
    this.cron = new Cron(expression, { timezone, paused: true, mode: '5-part' });
  }

  /** The schedule; invalid (422 at `["body","cron"]` / `["body","timezone"]`) otherwise. */
  static of(expression: string, timezone: string): CronSchedule {
    const problems = scheduleTimeProblems(expression, timezone);
    if (problems.length) throw AppError.invalid(problems);
    return new CronSchedule(expression.trim(), timezone);
  }

  /** True when `at` is an occurrence: its local time matches and it is that time's first instant. */
  isOccurrence(at: Date): boolean {
    if (at.getTime() % 60_000 !== 0 || !this.cron.match(at)) return false;
    const wall = wallClock(at, this.timezone);
    const offset = wall - at.getTime();
    const before = new Date(at.getTime() - 3 * HOUR_MS);
    const offsetBefore = wallClock(before, this.timezone) - before.getTime();
    if (offsetBefore <= offset) return true;
    // Clocks went back within the last three hours: the same wall-clock time may have been shown already.
    const first = new Date(at.getTime() - (offsetBefore - offset));
    return wallClock(first, this.timezone) !== wall;
  }

  /** The first occurrence strictly after `after`; null when there is none. */
  next(after: Date): Date | null {
    let at: Date | null = after;
    for (let i = 0; i < MAX_STEPS && at; i += 1) {
      at = this.cron.nextRun(at);
      if (at && this.isOccurrence(at)) return at;
    }
    return null;
  }

  /** The latest occurrence at or before `at` and not before `notBefore`; null when there is none. */
  latest(at: Date, notBefore: Date): Date | null {
    let ref = new Date(at.getTime() + 1);
    for (let i = 0; i < MAX_STEPS; i += 1) {
      const found = this.cron.previousRuns(1, ref)[0];
      if (!found || found.getTime() < notBefore.getTime()) return null;
      if (found.getTime() <= at.getTime() && this.isOccurrence(found)) return found;
      ref = found;
    }
    return null;
  }
}
