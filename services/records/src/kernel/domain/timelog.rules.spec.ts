import { AppError, type Principal } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { checkTimeLogChange, checkTimeLogCreate } from './timelog.rules.js';

const me = '0190a000-0000-7000-8000-000000000001';
const other = '0190a000-0000-7000-8000-000000000002';
const as = (role: Principal['role'], authKind: Principal['authKind'] = 'token', userId = me): Principal => ({ userId, role, authKind });
const link = (id: string) => ({ type: 'User', id });

function kind(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as AppError).kind;
  }
}

describe('TimeLog ownership', () => {
  it('lets every role log its own time and only time admins log for others', () => {
    for (const role of ['Artist', 'Viewer'] as const) {
      expect(kind(() => checkTimeLogCreate(as(role), { user: link(me), minutes: 30 }))).toBeUndefined();
      expect(kind(() => checkTimeLogCreate(as(role), { user: link(other) }))).toBe('forbidden');
      expect(kind(() => checkTimeLogCreate(as(role), { minutes: 30 }))).toBe('invalid');
    }
    for (const role of ['Admin', 'Supervisor', 'Coordinator'] as const) {
      expect(kind(() => checkTimeLogCreate(as(role), { user: link(other) }))).toBeUndefined();
    }
    expect(kind(() => checkTimeLogCreate(as('Service', 'service', ''), { user: link(other) }))).toBeUndefined();
  });

  it('guards changes to somebody else’s TimeLog and moving one to somebody else', () => {
    expect(kind(() => checkTimeLogChange(as('Viewer'), { user: link(other) }))).toBe('forbidden');
    expect(kind(() => checkTimeLogChange(as('Artist'), { user: link(me) }, { user: link(other) }))).toBe('forbidden');
    expect(kind(() => checkTimeLogChange(as('Artist'), { user: link(me) }, { user: link(me), minutes: 5 }))).toBeUndefined();
    expect(kind(() => checkTimeLogChange(as('Supervisor'), { user: link(other) }, { user: link(me) }))).toBeUndefined();
    // A service acting for a user is that user, not a time admin.
    expect(kind(() => checkTimeLogChange(as('Artist', 'service'), { user: link(other) }))).toBe('forbidden');
  });
});
