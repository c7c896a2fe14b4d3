import { describe, expect, it } from 'vitest';
import { ISO_MICROS, isoMicros, sqlIsoMicros } from './time.js';

describe('timestamps', () => {
  it('formats a Date with six fraction digits', () => {
    const s = isoMicros(new Date('2026-03-01T10:20:30.123Z'), 45);
    expect(s).toBe('2026-03-01T10:20:30.123045Z');
    expect(ISO_MICROS.test(s)).toBe(true);
    expect(ISO_MICROS.test('2026-03-01T10:20:30.123Z')).toBe(false);
  });

  it('refuses microseconds a Date already holds', () => {
    expect(() => isoMicros(new Date(), 1000)).toThrow(RangeError);
  });

  it('formats a column in SQL with the same pattern', () => {
    expect(sqlIsoMicros('t.updated_at')).toBe(`to_char(t.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);
  });
});
