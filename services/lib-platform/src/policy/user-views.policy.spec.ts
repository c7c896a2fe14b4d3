import { describe, expect, it } from 'vitest';
import { dayNumber, mayReadUserViews, timesheetRangeProblems } from './user-views.policy.js';

const ME = '0190a0b0-0000-7000-8000-000000000003';

describe('mayReadUserViews', () => {
  it.each([
    ['Admin', 'token', 'someone-else', true],
    ['Supervisor', 'token', 'someone-else', true],
    ['Coordinator', 'api_key', 'someone-else', true],
    ['Artist', 'token', ME, true],
    ['Viewer', 'api_key', ME, true],
    ['Artist', 'token', 'someone-else', false],
    ['Viewer', 'token', 'someone-else', false],
    ['Guest', 'guest', '', false],
    ['Service', 'service', '', true],
  ] as const)('%s (%s) reading %s: %s', (role, authKind, userId, may) => {
    const other = '0190a0b0-0000-7000-8000-0000000000ff';
    expect(mayReadUserViews({ role, authKind, userId }, userId === 'someone-else' || userId === '' ? other : ME)).toBe(may);
  });

  it('compares ids case-insensitively', () => {
    expect(mayReadUserViews({ role: 'Artist', authKind: 'token', userId: ME }, ME.toUpperCase())).toBe(true);
  });
});

describe('timesheet dates', () => {
  it('reads real calendar days only', () => {
    expect(dayNumber('1970-01-02')).toBe(1);
    expect(dayNumber('2028-02-29')).toBeDefined();
    for (const bad of ['2026-02-29', '2026-02-30', '2026-13-01', '2026-00-10', '2026-1-01', '20260101', '2026-01-01T00:00:00Z', ' 2026-01-01', '']) {
      expect(dayNumber(bad), bad).toBeUndefined();
    }
  });

  it('locates each problem in the query', () => {
    expect(timesheetRangeProblems('2026-01-01', '2026-01-01')).toEqual([]);
    expect(timesheetRangeProblems('2026-01-01', '2027-01-01')).toEqual([]);
    expect(timesheetRangeProblems(undefined, 'x').map((p) => [p.loc, p.type])).toEqual([
      [['query', 'from'], 'missing'],
      [['query', 'to'], 'date_parsing'],
    ]);
    expect(timesheetRangeProblems('2026-01-02', '2026-01-01').map((p) => p.loc)).toEqual([['query', 'from']]);
    expect(timesheetRangeProblems('2026-01-01', '2027-01-02')[0]!.msg).toContain('366 days');
  });
});
