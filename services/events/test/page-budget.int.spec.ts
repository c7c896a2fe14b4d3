/**
 * ListEvents pages are bounded by bytes as well as rows: with a small budget, large events
 * come back in short pages marked `truncated`, and paging on from the last id (after= oldest
 * first, before= newest first) reads every event once, in order. An event larger than the
 * whole budget still comes back, alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_OVERHEAD_BYTES } from '../src/store/event-log.repository.js';
import { eventsWorld, makeEvent, readAll, sqlClient, waitForLastId, type EventsClient, type EventsWorld } from './helpers.js';

const BUDGET = 100_000;
const BIG = 30_000;

let world: EventsWorld;
let client: EventsClient;

beforeAll(async () => {
  world = await eventsWorld('evb', { EVENTS_PAGE_MAX_BYTES: String(BUDGET) });
  client = world.client;
  const pub = world.pub;
  // ids 1..10: ~30 KB each; 11: larger than the whole budget; 12..14: small.
  for (let i = 1; i <= 10; i++) await pub.publish(makeEvent({ changes: { n: i, blob: 'x'.repeat(BIG) } }));
  await pub.publish(makeEvent({ changes: { n: 11, blob: 'y'.repeat(BUDGET * 2) } }));
  for (let i = 12; i <= 14; i++) await pub.publish(makeEvent({ changes: { n: i } }));
  await waitForLastId(client, 14);
});

afterAll(async () => {
  await world?.close();
});

const ids = (page: { items: { id: number }[] }) => page.items.map((e) => e.id);

describe('ListEvents byte budget', () => {
  it('stops a page at the budget and says so; after= continues with no gap and no duplicate', async () => {
    // Each large event counts its changes text plus the per-event overhead: three fit in the budget.
    const per = BIG + 20 + EVENT_OVERHEAD_BYTES;
    expect(3 * per).toBeLessThanOrEqual(BUDGET);
    expect(4 * per).toBeGreaterThan(BUDGET);
    const first = await client.list({ limit: 100, after: 0 });
    expect(ids(first)).toEqual([1, 2, 3]);
    expect(first.truncated).toBe(true);
    expect(first.lastId).toBe(14);
    const seen: number[] = [];
    let after = 0;
    for (let pages = 0; pages < 20; pages++) {
      const page = await client.list({ limit: 100, after });
      seen.push(...ids(page));
      if (!page.truncated) break;
      after = page.items.at(-1)!.id;
    }
    expect(seen).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    expect((await readAll(client)).map((e) => e.id)).toEqual(seen);
  });

  it('an event larger than the whole budget comes back alone', async () => {
    const page = await client.list({ limit: 100, after: 10 });
    expect(ids(page)).toEqual([11]);
    expect(page.truncated).toBe(true);
    expect(JSON.parse(page.items[0]!.changesJson).blob).toHaveLength(BUDGET * 2);
  });

  it('newest first pages on with before=', async () => {
    const first = await client.list({ limit: 100 });
    // 14..12 are small, 11 alone is past the budget: the page ends before it.
    expect(ids(first)).toEqual([14, 13, 12]);
    expect(first.truncated).toBe(true);
    const next = await client.list({ limit: 100, before: 12 });
    expect(ids(next)).toEqual([11]);
    const then = await client.list({ limit: 100, before: 11 });
    expect(ids(then)).toEqual([10, 9, 8]);
    expect(then.truncated).toBe(true);
  });

  it('a page that ends at its limit or at the log end is not truncated', async () => {
    expect((await client.list({ limit: 2, after: 0 })).truncated).toBe(false);
    expect((await client.list({ limit: 2, after: 11 })).truncated).toBe(false);
    const tail = await client.list({ limit: 100, after: 11 });
    expect(ids(tail)).toEqual([12, 13, 14]);
    expect(tail.truncated).toBe(false);
  });

  it('filters still apply to a budgeted page', async () => {
    const none = await client.list({ limit: 100, entityType: 'Asset' });
    expect(none.items).toEqual([]);
    expect(none.truncated).toBe(false);
  });

  it('stores the size of each row beside it', async () => {
    const sql = await sqlClient(world.db.url);
    try {
      const rows = await sql.query<{ ok: boolean }>('select bool_and(changes_bytes = octet_length(changes::text)) as ok from "events"."event_log"');
      expect(rows[0]!.ok).toBe(true);
    } finally {
      await sql.close();
    }
  });
});
