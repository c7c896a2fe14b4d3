/**
 * Batches that write the same records in other orders, against the real PostgreSQL through records'
 * signed gRPC (docs/api-notes.md, "Batches"): every batch locks the records it updates or retires in id
 * order before its first request, so crossing batches wait for each other and all succeed; a
 * transaction PostgreSQL still aborts as a deadlock or serialization failure runs once more, then is 409
 * `concurrent_change` — never a 500.
 */
import { knex } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, natsNames, newId, type CallContext } from '@reelbase/lib-platform';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { KnexRecordStore } from '../src/core/store/knex.record.store.js';
import { openQueryPool } from '../src/core/store/query.pool.js';
import { startRecordsWorld, text, type RecordsWorld } from './records.world.js';

const asService: CallContext = { requestId: 'bl-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const artist: CallContext = { requestId: 'bl-artist', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };

const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
    { code: 'Shot', project_scoped: true, fields: [text('code'), text('description')] },
  ],
  statuses: [],
  steps: [],
  priorities: [],
  transitions: {},
  task_templates: [],
};

let world: RecordsWorld;
let projectId: string;

beforeAll(async () => {
  world = await startRecordsWorld('batch_locks');
  await world.client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  projectId = (await world.client.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'P', code: 'p' }) }, asService)).record!.id;
});

afterAll(async () => {
  await world?.stop();
});

const batch = (requests: unknown[]) => world.client.call.batchRecords({ requestsJson: JSON.stringify(requests) }, artist);
const update = (id: string, description: string) => ({ request_type: 'update', entity_type: 'Shot', entity_id: id, data: { description } });

/** A fixed sequence of permutations of `n` (the same every run). */
function permutations(n: number, count: number): number[][] {
  let seed = 20261128;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => {
    const order = [...Array(n).keys()];
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order;
  });
}

describe('crossing batches', () => {
  it('A then B beside B then A, and batches naming four records in random orders, many at once: every batch commits', async () => {
    const ids: string[] = [];
    for (const code of ['a', 'b', 'c', 'd']) {
      ids.push((await world.client.call.createRecord({ entityType: 'Shot', projectId, dataJson: JSON.stringify({ code }) }, artist)).record!.id);
    }
    const [a, b] = ids as [string, string];
    let sent = 0;
    for (let round = 0; round < 30; round++) {
      const crossing = Array.from({ length: 4 }, (_, k) =>
        batch(k % 2 === 0 ? [update(a, `r${round} k${k}`), update(b, `r${round} k${k}`)] : [update(b, `r${round} k${k}`), update(a, `r${round} k${k}`)]),
      );
      // Between the updates a create, so each batch holds its first row a while before it reaches the second.
      const shuffled = permutations(4, 4).map((order, k) =>
        batch([
          update(ids[order[0]!]!, `r${round} p${k}`),
          { request_type: 'create', entity_type: 'Shot', project_id: projectId, data: { code: `r${round}p${k}` } },
          ...order.slice(1).map((i) => update(ids[i]!, `r${round} p${k}`)),
        ]),
      );
      const outcomes = await Promise.allSettled([...crossing, ...shuffled]);
      sent += outcomes.length;
      const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
      expect(refused, `round ${round}`).toEqual([]);
    }
    expect(sent).toBe(240);
    // Each record holds what the last batch to lock it wrote: one of the batches' values, whole.
    const rows = await world.sql.query<{ d: string }>(`select data->>'description' as d from records.record where id = any($1::uuid[])`, [ids]);
    expect(rows.rows.every((r) => /^r29 [kp]\d$/.test(r.d))).toBe(true);
  }, 120_000);
});

describe('a transaction PostgreSQL aborts', () => {
  it('runs once more after a deadlock or serialization failure, then is 409 concurrent_change', async () => {
    const db = knex({ client: 'pg', connection: world.db.url, pool: { min: 0, max: 2 } });
    const queryDb = openQueryPool({ databaseUrl: world.db.url, timeoutMs: 5000, max: 1 });
    const store = new KnexRecordStore({ writes: db, reads: db }, natsNames(world.prefix), { db: queryDb, timeoutMs: 5000 });
    try {
      for (const code of ['40P01', '40001']) {
        let runs = 0;
        const once = await store.transaction(async () => {
          runs += 1;
          if (runs === 1) throw Object.assign(new Error('aborted'), { code });
          return 'second run';
        });
        expect([once, runs]).toEqual(['second run', 2]);

        runs = 0;
        const err = await store
          .transaction(async () => {
            runs += 1;
            throw Object.assign(new Error('aborted'), { code });
          })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AppError);
        expect(err).toMatchObject({ kind: 'conflict', code: 'concurrent_change' });
        expect(runs).toBe(2);
      }
      // Anything else runs once and is not a collision.
      let runs = 0;
      const other = await store
        .transaction(async () => {
          runs += 1;
          throw Object.assign(new Error('unique'), { code: '23505' });
        })
        .catch((e: unknown) => e);
      expect([other, runs]).toMatchObject([{ code: 'duplicate_id' }, 1]);
    } finally {
      await db.destroy();
      await queryDb.destroy();
    }
  });
});
