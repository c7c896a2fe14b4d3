import { describe, expect, it } from 'vitest';
import type { LiveItem } from '../live/gateway.bus.js';
import { EventCursor, type EventLog } from './event.cursor.js';

const item = (id: number): LiveItem => ({
  row: { id, entity_type: 'Shot', entity_id: `e${id}`, project_id: null, action: 'update', actor: null, changes: {}, created_at: '' },
  text: String(id),
});

/**
 * A log holding ids 1..last, with a call counter and optional failures. `budget` caps the
 * rows per page the way the events service's byte budget does, marking such pages truncated.
 */
function fakeLog(last: number, opts: { failFirst?: number; budget?: number } = {}) {
  const state = { last, reads: 0, fail: opts.failFirst ?? 0 };
  const log: EventLog = {
    after: async (afterId, limit) => {
      state.reads++;
      await new Promise((r) => setTimeout(r, 1));
      if (state.fail > 0) {
        state.fail--;
        throw new Error('down');
      }
      const out: LiveItem[] = [];
      const cap = Math.min(limit, opts.budget ?? limit);
      for (let id = afterId + 1; id <= state.last && out.length < cap; id++) out.push(item(id));
      return { items: out, truncated: out.length === cap && cap < limit && afterId + cap < state.last };
    },
  };
  return { log, state };
}

function cursor(start: number, log: EventLog, extra: { pageSize?: number; maxPending?: number } = {}) {
  const sent: number[] = [];
  const failures: [number, string][] = [];
  const c = new EventCursor({ start, log, send: (i) => sent.push(i.row.id), fail: (code, reason) => failures.push([code, reason]), retryMs: 1, ...extra });
  return { c, sent, failures };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

describe('EventCursor', () => {
  it('sends the next id at once without reading the log', async () => {
    const { log, state } = fakeLog(10);
    const { c, sent } = cursor(10, log);
    c.offer(item(11));
    c.offer(item(12));
    expect(sent).toEqual([11, 12]);
    expect(state.reads).toBe(0);
  });

  it('drops ids at or below the cursor (duplicates)', async () => {
    const { log } = fakeLog(10);
    const { c, sent } = cursor(10, log);
    c.offer(item(11));
    c.offer(item(11));
    c.offer(item(3));
    expect(sent).toEqual([11]);
  });

  it('closes a gap from the log first, in order, never twice', async () => {
    const { log, state } = fakeLog(15);
    const { c, sent } = cursor(10, log);
    c.offer(item(14)); // 11..13 were missed
    c.offer(item(13));
    c.offer(item(15));
    c.offer(item(16)); // not in the log yet: held, sent after 15
    expect(sent).toEqual([]);
    await settle();
    expect(sent).toEqual([11, 12, 13, 14, 15, 16]);
    expect(state.reads).toBeGreaterThanOrEqual(1);
    c.offer(item(17));
    expect(sent.at(-1)).toBe(17);
  });

  it('since=N replays the log in pages, then goes live with no gap and no duplicate', async () => {
    const { log, state } = fakeLog(2500);
    const { c, sent } = cursor(100, log, { pageSize: 1000 });
    const replay = c.start();
    // Live rows arriving during the replay: some already in the log, some newer.
    c.offer(item(2400));
    c.offer(item(2501));
    c.offer(item(2502));
    state.last = 2502; // the log catches up with the live feed
    await replay;
    c.offer(item(2502));
    c.offer(item(2503));
    expect(sent[0]).toBe(101);
    expect(sent).toEqual(Array.from({ length: 2403 }, (_, i) => 101 + i));
    expect(state.reads).toBeGreaterThanOrEqual(3);
  });

  it('pages through short pages cut by the byte budget, not stopping at the first', async () => {
    // Large events: the log answers 2 rows per read although 1000 were asked for.
    const { log, state } = fakeLog(20, { budget: 2 });
    const { c, sent } = cursor(0, log, { pageSize: 1000 });
    await c.start();
    expect(sent).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(state.reads).toBe(10);
    c.offer(item(21));
    expect(sent.at(-1)).toBe(21);
  });

  it('start with nothing new sends nothing and leaves the cursor', async () => {
    const { log } = fakeLog(7);
    const { c, sent } = cursor(7, log);
    await c.start();
    expect(sent).toEqual([]);
    expect(c.position).toBe(7);
  });

  it('waits for a held row the log does not show yet, then delivers in order', async () => {
    const { log, state } = fakeLog(10);
    const { c, sent } = cursor(10, log);
    c.offer(item(12)); // 11 not yet visible in the log
    await settle();
    expect(sent).toEqual([]);
    state.last = 12;
    await new Promise((r) => setTimeout(r, 80));
    expect(sent).toEqual([11, 12]);
  });

  it('retries a failing log and fails with 1013 when it stays down', async () => {
    const flaky = fakeLog(12, { failFirst: 2 });
    const a = cursor(10, flaky.log);
    a.c.offer(item(12));
    await new Promise((r) => setTimeout(r, 50));
    expect(a.sent).toEqual([11, 12]);

    const dead = fakeLog(12, { failFirst: 1000 });
    const b = new EventCursor({ start: 10, log: dead.log, send: () => {}, fail: (code) => codes.push(code), retryMs: 1, maxFailures: 3 });
    const codes: number[] = [];
    b.offer(item(12));
    await new Promise((r) => setTimeout(r, 50));
    expect(codes).toEqual([1013]);
  });

  it('a slow consumer overflowing the held queue is failed with 1013', async () => {
    const { log } = fakeLog(0);
    const { c, failures } = cursor(0, log, { maxPending: 5 });
    for (let id = 2; id < 10; id++) c.offer(item(id));
    expect(failures).toEqual([[1013, 'client too slow']]);
  });
});
