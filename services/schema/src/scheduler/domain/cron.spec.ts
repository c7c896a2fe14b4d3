import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { CronSchedule, scheduleTimeProblems } from './cron.js';

const at = (s: string) => new Date(s);
/** Every occurrence in [from, to). */
function occurrences(cron: string, tz: string, from: string, to: string): string[] {
  const c = CronSchedule.of(cron, tz);
  const out: string[] = [];
  let t: Date | null = new Date(at(from).getTime() - 1);
  while ((t = c.next(t)) && t < at(to)) out.push(t.toISOString());
  return out;
}

describe('next_run_at in a time zone', () => {
  it('five fields with lists, ranges and steps, read in the schedule’s zone', () => {
    // 09:00 on weekdays in Paris (UTC+1 in winter, UTC+2 in summer).
    expect(CronSchedule.of('0 9 * * 1-5', 'Europe/Paris').next(at('2026-01-02T12:00:00Z'))!.toISOString()).toBe('2026-01-05T08:00:00.000Z');
    expect(CronSchedule.of('0 9 * * 1-5', 'Europe/Paris').next(at('2026-07-03T12:00:00Z'))!.toISOString()).toBe('2026-07-06T07:00:00.000Z');
    expect(occurrences('0,30 8-9 * * *', 'UTC', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')).toEqual([
      '2026-01-01T08:00:00.000Z',
      '2026-01-01T08:30:00.000Z',
      '2026-01-01T09:00:00.000Z',
      '2026-01-01T09:30:00.000Z',
    ]);
    expect(occurrences('*/20 * * * *', 'Asia/Kolkata', '2026-01-01T00:00:00Z', '2026-01-01T01:00:00Z')).toEqual([
      '2026-01-01T00:10:00.000Z',
      '2026-01-01T00:30:00.000Z',
      '2026-01-01T00:50:00.000Z',
    ]);
  });

  it('@hourly, @daily, @weekly and @monthly at local midnight and on the hour', () => {
    const from = at('2026-03-28T12:10:00Z');
    expect(CronSchedule.of('@hourly', 'Asia/Kolkata').next(from)!.toISOString()).toBe('2026-03-28T12:30:00.000Z');
    expect(CronSchedule.of('@daily', 'Asia/Tokyo').next(from)!.toISOString()).toBe('2026-03-28T15:00:00.000Z');
    // Sunday 2026-03-29 00:00 in London is still GMT (the clocks go forward at 01:00).
    expect(CronSchedule.of('@weekly', 'Europe/London').next(from)!.toISOString()).toBe('2026-03-29T00:00:00.000Z');
    expect(CronSchedule.of('@monthly', 'America/New_York').next(from)!.toISOString()).toBe('2026-04-01T04:00:00.000Z');
    expect(CronSchedule.of('@daily', 'UTC').next(at('2026-03-28T00:00:00Z'))!.toISOString()).toBe('2026-03-29T00:00:00.000Z');
  });

  it('refuses a bad cron at ["body","cron"] and a bad zone at ["body","timezone"]', () => {
    for (const bad of ['* * * *', '61 * * * *', '* * * * * *', '@yearly', '@reboot', '0 0 L * *', '0 0 * * 5#2', '0 0 ? * *', '5/5 * * * *', '', 'x']) {
      expect(scheduleTimeProblems(bad, undefined), bad).toEqual([{ loc: ['body', 'cron'], msg: expect.any(String), type: 'value_error' }]);
    }
    for (const bad of ['Mars/Olympus', '+01:00', 'Local', '', 'Europe/London ']) {
      expect(scheduleTimeProblems(undefined, bad), bad).toEqual([{ loc: ['body', 'timezone'], msg: expect.any(String), type: 'value_error' }]);
    }
    expect(scheduleTimeProblems('*/15 0-6,22 1,15 jan-mar mon-fri', 'America/New_York')).toEqual([]);
    expect(() => CronSchedule.of('bad', 'Nowhere/City')).toThrow(AppError);
  });
});

describe('daylight saving (fake clock: the occurrences around each change)', () => {
  it('skips a local time that does not exist that day (clocks go forward)', () => {
    // New York, 2026-03-08: 02:00 EST becomes 03:00 EDT, so 02:30 does not exist.
    expect(occurrences('30 2 * * *', 'America/New_York', '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z')).toEqual([
      '2026-03-07T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
    // London, 2026-03-29: 01:00 GMT becomes 02:00 BST, so 01:30 does not exist.
    expect(occurrences('30 1 * * *', 'Europe/London', '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
    // An interval expression loses only the times of the gap.
    expect(occurrences('*/30 * * * *', 'America/New_York', '2026-03-08T06:00:00Z', '2026-03-08T08:00:00Z')).toEqual([
      '2026-03-08T06:00:00.000Z',
      '2026-03-08T06:30:00.000Z',
      '2026-03-08T07:00:00.000Z',
      '2026-03-08T07:30:00.000Z',
    ]);
  });

  it('runs a local time that occurs twice once, at its first instant (clocks go back)', () => {
    // New York, 2026-11-01: 02:00 EDT becomes 01:00 EST, so 01:30 occurs at 05:30Z and 06:30Z.
    expect(occurrences('30 1 * * *', 'America/New_York', '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z')).toEqual([
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
    // London, 2026-10-25: 02:00 BST becomes 01:00 GMT, so 01:30 occurs at 00:30Z and 01:30Z.
    expect(occurrences('30 1 * * *', 'Europe/London', '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z')).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
    // Every 30 minutes: 01:00 and 01:30 once each, then 02:00 EST.
    expect(occurrences('*/30 * * * *', 'America/New_York', '2026-11-01T04:30:00Z', '2026-11-01T07:30:00Z')).toEqual([
      '2026-11-01T04:30:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T05:30:00.000Z',
      '2026-11-01T07:00:00.000Z',
    ]);
    // The second 01:30 is not an occurrence when looked for backwards either.
    const c = CronSchedule.of('30 1 * * *', 'America/New_York');
    expect(c.isOccurrence(at('2026-11-01T06:30:00Z'))).toBe(false);
    expect(c.latest(at('2026-11-01T06:45:00Z'), at('2026-10-01T00:00:00Z'))!.toISOString()).toBe('2026-11-01T05:30:00.000Z');
    expect(CronSchedule.of('30 2 * * *', 'America/New_York').latest(at('2026-03-08T12:00:00Z'), at('2026-03-01T00:00:00Z'))!.toISOString()).toBe(
      '2026-03-07T07:30:00.000Z',
    );
  });
});
