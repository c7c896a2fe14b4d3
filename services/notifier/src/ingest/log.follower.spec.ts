import { Metrics, createLogger, type ContractEvent } from '@reelbase/lib-platform';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNotifierMetrics } from '../metrics.js';
import type { IngestStore, IngestTx } from '../domain/ports.js';
import { LogFollower, type EventSource } from './log.follower.js';

/** An event log in memory; counts the reads. */
class MemoryLog implements EventSource {
  reads = 0;
  events: ContractEvent[] = [];
  append(): void {
    const id = this.events.length + 1;
    this.events.push({
      id,
      entity_type: 'Shot',
      entity_id: '0190c6d2-0000-7000-8000-000000000001',
      action: 'update',
      changes: { description: `d${id}` },
      actor: null,
      created_at: new Date().toISOString(),
    } as unknown as ContractEvent);
  }
  async after(after: number, limit: number) {
    this.reads++;
    return { items: this.events.filter((e) => e.id > after).slice(0, limit), lastId: this.events.length };
  }
  async lastId() {
    return this.events.length;
  }
}

/** The follower's store over a position in memory: every other statement finds nothing. */
const position = { lastEventId: 0, liveFrom: 0 };

function memoryRepo(): IngestStore {
  const state = position;
  state.lastEventId = 0;
  const known: Partial<Record<keyof IngestTx, unknown>> = {
    lockFollowState: async () => ({ ...state }),
    setLastEventId: async (id: number) => {
      state.lastEventId = id;
    },
    activeWebhooks: async () => [],
    tasks: async () => [],
    notes: async () => new Map(),
    users: async () => [],
    labels: async () => new Map(),
    insertNotifications: async () => 0,
    insertDeliveries: async () => 0,
  };
  const tx = new Proxy({} as IngestTx, { get: (_t, k: string) => known[k as keyof IngestTx] ?? (async () => undefined) });
  return { transaction: (fn) => fn(tx) };
}

function follower(log: MemoryLog, coalesceMs: number, batchMax = 500, listen?: () => Promise<void>): LogFollower {
  return new LogFollower({
    listen,
    repo: memoryRepo(),
    source: log,
    logger: createLogger('notifier-test', 'silent'),
    metrics: createNotifierMetrics(new Metrics(`notifier_follower_spec_${coalesceMs}_${batchMax}`)),
    batchMax,
    pollMs: 60_000,
    coalesceMs,
    onDeliveries: () => {},
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LogFollower', () => {
  let running: LogFollower | null = null;
  afterEach(async () => {
    await running?.stop();
    running = null;
  });

  it('applies events announced within NOTIFIER_COALESCE_MS as one page, and reads no empty page after a short one', async () => {
    const log = new MemoryLog();
    running = follower(log, 40);
    running.start();
    await sleep(20);
    const idle = log.reads;
    // Ten events appended and announced a few milliseconds apart, as sequential writes do.
    for (let i = 0; i < 10; i++) {
      log.append();
      running.nudge();
      await sleep(2);
    }
    await sleep(120);
    const reads = log.reads - idle;
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(2);
    // Everything was applied.
    expect(position.lastEventId).toBe(10);
  });

  it('reads at once with coalescing off, and reads on after a full page without waiting for an announcement', async () => {
    const log = new MemoryLog();
    for (let i = 0; i < 7; i++) log.append();
    running = follower(log, 0, 3);
    running.start();
    await sleep(50);
    // Pages of 3, 3 and 1: the full ones are followed at once, the short one ends the reading.
    expect(log.reads).toBe(3);
    log.append();
    running.nudge();
    await sleep(30);
    expect(log.reads).toBe(4);
  });

  it('listens for one announcement at a time, renewed before the read that follows it', async () => {
    const log = new MemoryLog();
    const order: string[] = [];
    const read = log.after.bind(log);
    log.after = (after, limit) => (order.push('read'), read(after, limit));
    // A bus that delivers to the follower only while it listens, one announcement per listen.
    let listening = 0;
    const f = follower(log, 40, 500, async () => {
      order.push('listen');
      listening++;
    });
    const announce = () => {
      log.append();
      if (listening === 0) return;
      listening--;
      f.nudge();
    };
    running = f;
    f.start();
    await vi.waitFor(() => expect(order).toEqual(['listen', 'read']));
    // Ten announcements in a row: however slow the machine, none can reach the follower while it reads.
    for (let i = 0; i < 10; i++) announce();
    await vi.waitFor(() => expect(position.lastEventId).toBe(10));
    await sleep(60);
    // The first announcement woke it; the other nine reached nobody, and the page has them all.
    expect(order).toEqual(['listen', 'read', 'listen', 'read']);
  });
});
