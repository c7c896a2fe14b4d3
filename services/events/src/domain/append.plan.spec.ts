import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '@reelbase/lib-platform';
import { planAppend, toContractEvent } from './append.plan.js';

const ev = (n: number): StreamEvent => ({
  event_id: `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`,
  entity_type: 'Task',
  entity_id: '00000000-0000-7000-8000-aaaaaaaaaaaa',
  project_id: null,
  action: 'create',
  actor: null,
  changes: { n },
  occurred_at: '2026-01-01T00:00:00Z',
});

describe('planAppend', () => {
  it('numbers new events last+1, last+2, … in arrival order', () => {
    const plan = planAppend(41, [ev(1), ev(2), ev(3)], new Set());
    expect(plan.rows.map((r) => r.id)).toEqual([42, 43, 44]);
    expect(plan.rows.map((r) => r.event_id)).toEqual([ev(1).event_id, ev(2).event_id, ev(3).event_id]);
    expect(plan.last).toBe(44);
    expect(plan.duplicates).toBe(0);
  });

  it('gives an already-logged event no id and leaves no gap', () => {
    const plan = planAppend(10, [ev(1), ev(2), ev(3)], new Set([ev(2).event_id]));
    expect(plan.rows.map((r) => [r.id, r.event_id])).toEqual([
      [11, ev(1).event_id],
      [12, ev(3).event_id],
    ]);
    expect(plan.last).toBe(12);
    expect(plan.duplicates).toBe(1);
  });

  it('keeps only the first of an event repeated inside the batch', () => {
    const plan = planAppend(0, [ev(1), ev(1), ev(2), ev(1)], new Set());
    expect(plan.rows.map((r) => r.id)).toEqual([1, 2]);
    expect(plan.duplicates).toBe(2);
  });

  it('keeps last unchanged when everything is a duplicate', () => {
    const plan = planAppend(7, [ev(1)], new Set([ev(1).event_id]));
    expect(plan).toEqual({ rows: [], last: 7, duplicates: 1 });
  });
});

describe('toContractEvent', () => {
  it('produces the client shape', () => {
    const [row] = planAppend(0, [ev(5)], new Set()).rows;
    expect(toContractEvent(row!, '2026-01-01T00:00:00.000000Z')).toEqual({
      id: 1,
      entity_type: 'Task',
      entity_id: ev(5).entity_id,
      project_id: null,
      action: 'create',
      actor: null,
      changes: { n: 5 },
      created_at: '2026-01-01T00:00:00.000000Z',
    });
  });
});
