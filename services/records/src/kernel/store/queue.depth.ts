/**
 * Depth of a work queue a records module keeps in PostgreSQL, read at every metrics scrape
 * (docs/farm.md, docs/sitesync.md): one read-only `select <label>, count(*)::int ... group by`
 * statement, bounded by a statement timeout, whose counts each module names.
 */
import type { Knex } from '@mikro-orm/postgresql';

/** Runs `sql` (rows `{ label, n }`) in a transaction of at most `timeoutMs`; the labels not seen count 0. */
export async function readQueueDepth<L extends string>(db: Knex, sql: string, labels: readonly L[], timeoutMs = 2000): Promise<Record<L, number>> {
  const depth = Object.fromEntries(labels.map((l) => [l, 0])) as Record<L, number>;
  const rows = await db.transaction(async (trx) => {
    await trx.raw(`set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    return (await trx.raw<{ rows: { label: L; n: number }[] }>(sql)).rows;
  });
  for (const row of rows) if (Object.hasOwn(depth, row.label)) depth[row.label] = row.n;
  return depth;
}
