import { describe, expect, it } from 'vitest';
import type { Principal } from '../context.js';
import { ENTITY_TYPE_CODE_PATTERN, isEntityTypeCode } from './entity-type.policy.js';
import { IF_MATCH_NEVER, ifMatchHolds, normalizeIfMatch } from './if-match.policy.js';
import { mayLogTimeForOthers, mayWriteTimeLogOf, timeLogOwner } from './timelog.policy.js';

const ME = '0190a000-0000-7000-8000-0000000000c1';
const OTHER = '0190a000-0000-7000-8000-0000000000c2';
const artist: Principal = { userId: ME, role: 'Artist', authKind: 'token' };

describe('TimeLog ownership', () => {
  it('reads the owner from a link or a bare id', () => {
    expect(timeLogOwner({ type: 'User', id: ME })).toBe(ME);
    expect(timeLogOwner(ME)).toBe(ME);
    expect(timeLogOwner(null)).toBeUndefined();
    expect(timeLogOwner({ type: 'User' })).toBeUndefined();
  });

  it.each(['Admin', 'Supervisor', 'Coordinator'] as const)('lets a %s write anyone’s time', (role) => {
    expect(mayLogTimeForOthers({ ...artist, role })).toBe(true);
    expect(mayWriteTimeLogOf({ ...artist, role }, { type: 'User', id: OTHER })).toBe(true);
  });

  it.each(['Artist', 'Viewer'] as const)('lets a %s write only its own time', (role) => {
    const p = { ...artist, role };
    expect(mayLogTimeForOthers(p)).toBe(false);
    expect(mayWriteTimeLogOf(p, { type: 'User', id: ME })).toBe(true);
    expect(mayWriteTimeLogOf(p, { type: 'User', id: ME.toUpperCase() })).toBe(true);
    expect(mayWriteTimeLogOf(p, { type: 'User', id: OTHER })).toBe(false);
    expect(mayWriteTimeLogOf(p, undefined)).toBe(false);
  });

  it('does not restrict a service acting on its own behalf, but does one acting for a user', () => {
    expect(mayLogTimeForOthers({ userId: '', role: 'Service', authKind: 'service' })).toBe(true);
    expect(mayLogTimeForOthers({ userId: ME, role: 'Service', authKind: 'service' })).toBe(false);
  });

  it('never matches a principal without a user id to an owner', () => {
    expect(mayWriteTimeLogOf({ userId: '', role: 'Guest', authKind: 'guest' }, '')).toBe(false);
  });
});

describe('entity type codes', () => {
  it.each(['Shot', 'A', 'CustomThing2', `A${'b'.repeat(63)}`])('accepts %s', (s) => expect(isEntityTypeCode(s)).toBe(true));
  it.each(['shot', '', 'Shot.x', 'Shot>', 'Sh ot', `A${'b'.repeat(64)}`, 42])('refuses %s', (s) => expect(isEntityTypeCode(s)).toBe(false));
  it('publishes the pattern it checks', () => expect(ENTITY_TYPE_CODE_PATTERN).toBe('^[A-Z][A-Za-z0-9]{0,63}$'));
});

describe('If-Match', () => {
  const etag = '2026-01-01T00:00:00.123456Z';
  it.each([
    [`"${etag}"`, etag],
    [`W/"${etag}"`, etag],
    [`  "${etag}" `, etag],
    [etag, etag],
  ])('normalises %s', (header, want) => expect(normalizeIfMatch(header)).toBe(want));
  it('treats only an absent header as no condition', () => {
    expect(normalizeIfMatch(undefined)).toBeUndefined();
    expect(ifMatchHolds(undefined, etag)).toBe(true);
  });
  it.each(['*', ' * '])('matches any current record with %s', (header) => {
    expect(normalizeIfMatch(header)).toBe('*');
    expect(ifMatchHolds(header, etag)).toBe(true);
  });
  it.each(['', '  ', '""', 'W/""', 'W/', '"', `"${etag}`, `${etag}"`, `"${etag} x"`, `"a"b"`, `"${etag}",`, `, "${etag}"`, `"${etag}", ""`, '\u0000'])(
    'never matches the empty or malformed %j',
    (header) => {
      expect(normalizeIfMatch(header)).toBe(IF_MATCH_NEVER);
      expect(ifMatchHolds(header, etag)).toBe(false);
      expect(ifMatchHolds(normalizeIfMatch(header), etag)).toBe(false);
    },
  );
  it("matches a list when one of its tags is the record's, and is idempotent", () => {
    const list = `"2025-01-01T00:00:00Z", W/"${etag}"`;
    expect(normalizeIfMatch(list)).toBe(`2025-01-01T00:00:00Z, ${etag}`);
    expect(ifMatchHolds(list, etag)).toBe(true);
    expect(ifMatchHolds(normalizeIfMatch(list), etag)).toBe(true);
    expect(ifMatchHolds(list, '2026-02-02T00:00:00Z')).toBe(false);
    expect(ifMatchHolds(`"${etag}"`, etag)).toBe(true);
    expect(ifMatchHolds('"2025-01-01T00:00:00Z"', etag)).toBe(false);
  });
});
