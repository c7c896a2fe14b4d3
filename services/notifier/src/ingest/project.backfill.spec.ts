import { createLogger, type ContractEvent } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { ProjectBackfillStore } from '../domain/ports.js';
import { ProjectBackfill } from './project.backfill.js';

const project = (id: number) => (id % 3 === 0 ? null : `0190a0b0-0000-7000-8000-${String(id).padStart(12, '0')}`);

/** A log of `size` events (ids 1..size); `missing` are not in it; pages cut at `pageMax`. */
function log(size: number, pageMax = 1000, missing: number[] = []) {
  const reads: Array<[number, number]> = [];
  return {
    reads,
    after: async (after: number, limit: number) => {
      reads.push([after, limit]);
      const items: ContractEvent[] = [];
      for (let id = after + 1; id <= size && items.length < Math.min(limit, pageMax); id++) {
        if (missing.includes(id)) continue;
        items.push({ id, project_id: project(id) } as ContractEvent);
      }
      return { items, lastId: size };
    },
  };
}

/** Notifications by event id whose project is unknown; `set` records what was stored. */
function store(unknown: number[]): ProjectBackfillStore & { stored: Map<number, string | null>; left: Set<number> } {
  const left = new Set(unknown);
  const stored = new Map<number, string | null>();
  return {
    left,
    stored,
    unknownProjectEvents: async (after, limit) =>
      [...left]
        .filter((id) => id > after)
        .sort((a, b) => a - b)
        .slice(0, limit),
    setNotificationProjects: async (found) => {
      for (const f of found) {
        left.delete(f.eventId);
        stored.set(f.eventId, f.projectId);
      }
      return found.length;
    },
  };
}

const logger = createLogger('test', 'silent');

describe('ProjectBackfill', () => {
  it('looks up every unknown event, reading only the stretches of the log around them', async () => {
    const ids = [3, 4, 5, 900, 901, 5000];
    const s = store(ids);
    const l = log(6000);
    expect(await new ProjectBackfill({ store: s, source: l, logger }).run()).toBe(6);
    expect(s.left.size).toBe(0);
    expect([...s.stored]).toEqual(ids.map((id) => [id, project(id)]));
    // One read covers 3..502 (a page's most), then one from 900 on, then one for 5000 alone.
    expect(l.reads).toEqual([
      [2, 500],
      [899, 500],
      [4999, 1],
    ]);
  });

  it('goes on from where a short page stopped, and leaves events the log does not hold unknown without looping', async () => {
    const s = store([10, 11, 12, 13, 40]);
    const l = log(100, 2, [40]);
    await new ProjectBackfill({ store: s, source: l, logger }).run();
    expect([...s.left]).toEqual([40]);
    expect([...s.stored.keys()]).toEqual([10, 11, 12, 13]);
    // Once tried, an event the log lacks is not asked for again by this process.
    const reads = l.reads.length;
    const again = new ProjectBackfill({ store: s, source: l, logger });
    await again.run();
    await again.run();
    expect(l.reads.length).toBe(reads + 1);
  });
});
