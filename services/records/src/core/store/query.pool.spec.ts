/**
 * The gate summaries pass on the query pool: a bounded number run at once, the rest wait in a
 * bounded line for a bounded time, and a slot goes to the next in line when one ends.
 */
import { describe, expect, it } from 'vitest';
import { QueryGate } from './query.pool.js';

/** A task that ends when told to. */
function held() {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { run: () => done.then(() => 'ran'), end };
}

describe('QueryGate', () => {
  it('runs at most max at once, hands a freed slot to the next in line, and refuses past its line', async () => {
    const gate = new QueryGate(2, 60_000, 1, 'summaries');
    const a = held();
    const b = held();
    const c = held();
    const pa = gate.run(a.run);
    const pb = gate.run(b.run);
    const pc = gate.run(c.run);
    expect(gate.load).toEqual({ held: 2, waiting: 1 });
    // The line is full: told at once, as a 503 that says when to try again.
    await expect(gate.run(async () => 'never')).rejects.toMatchObject({ kind: 'unavailable', code: 'busy', retryAfter: 1 });
    a.end();
    expect(await pa).toBe('ran');
    expect(gate.load).toEqual({ held: 2, waiting: 0 });
    b.end();
    c.end();
    expect(await Promise.all([pb, pc])).toEqual(['ran', 'ran']);
    expect(gate.load).toEqual({ held: 0, waiting: 0 });
  });

  it('a waiter gives up after its wait and leaves the line; a failing task frees its slot', async () => {
    const gate = new QueryGate(1, 50, 5, 'summaries');
    const a = held();
    const pa = gate.run(a.run);
    await expect(gate.run(async () => 'late')).rejects.toMatchObject({ code: 'busy' });
    expect(gate.load).toEqual({ held: 1, waiting: 0 });
    a.end();
    await pa;
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'next')).toBe('next');
    expect(gate.load).toEqual({ held: 0, waiting: 0 });
  });
});
