/**
 * What a schedule's time is made of (docs/scheduler.md, "Cron and time zones"), checked the same
 * way by the gateway (request validation) and the schema service (which owns the schedules):
 *
 * - `cron`: five fields (minute hour day-of-month month day-of-week), each a `*`, a number or a
 *   name (`jan`..`dec`, `sun`..`sat`), a range, a list, and `/step` after `*` or a range; or one
 *   of `@hourly`, `@daily`, `@weekly`, `@monthly`. The fields' values are judged by croner, the
 *   library that computes the occurrences; the other extensions it knows (`L`, `W`, `#`, `?`,
 *   seconds, years, `@yearly`) are refused, so an expression means what it means in crontab(5).
 * - `timezone`: an IANA time zone name (`Europe/London`, `UTC`), as the platform's Intl knows it.
 */
import { Cron } from 'croner';

/** The names accepted in place of five fields. */
export const SCHEDULE_NAMES = ['@hourly', '@daily', '@weekly', '@monthly'] as const;

/** Longest cron expression accepted. */
export const MAX_CRON_LENGTH = 200;

/** Longest time zone name accepted. */
export const MAX_TIMEZONE_LENGTH = 64;

/** Characters of a schedule's `name` and of a target's `name`, `kind` (1 to this). */
export const SCHEDULE_TEXT_CHARS = 200;

/** What a schedule does with occurrences missed while no scheduler ran (docs/scheduler.md). */
export const CATCH_UP_MODES = ['skip', 'once'] as const;

/** Runs listed per page by default, and at most (GET /scheduler/schedules/{id}/runs). */
export const RUNS_PAGE = { default: 50, max: 500 } as const;

const VALUE = '(?:\\d{1,2}|[a-z]{3})';
const ITEM = `(?:\\*|${VALUE}(?:-${VALUE})?)(?:/\\d{1,2})?`;
const FIELD = new RegExp(`^${ITEM}(?:,${ITEM})*$`, 'i');

/** Why `cron` is not an accepted expression; null when it is. */
export function cronProblem(cron: string): string | null {
  const text = cron.trim();
  if (text === '' || cron.length > MAX_CRON_LENGTH) return `a cron expression of 1 to ${MAX_CRON_LENGTH} characters`;
  if (text.startsWith('@')) {
    return (SCHEDULE_NAMES as readonly string[]).includes(text) ? null : `one of ${SCHEDULE_NAMES.join(', ')}, or five fields`;
  }
  const fields = text.split(/\s+/);
  if (fields.length !== 5) return 'five fields: minute hour day-of-month month day-of-week';
  const bad = fields.findIndex((f) => !FIELD.test(f));
  if (bad >= 0) return `field ${bad + 1} (${fields[bad]}) is not a value, range, list or step`;
  try {
    new Cron(fields.join(' '), { paused: true, mode: '5-part' });
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).replace(/^CronPattern:\s*/, '');
  }
  return null;
}

/** Why `timezone` is not an IANA time zone name; null when it is. */
export function timezoneProblem(timezone: string): string | null {
  // Offsets (`+01:00`) and abbreviations are not zone names, though some Intl builds take them.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(timezone)) return 'an IANA time zone name, e.g. Europe/London';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    return `unknown time zone ${JSON.stringify(timezone)}: an IANA name, e.g. Europe/London`;
  }
  return null;
}
