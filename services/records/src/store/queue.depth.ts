/**
 * Depth of the work queues records keeps in PostgreSQL, read at every metrics scrape: render-farm
 * chunks waiting or leased, and site-sync states waiting, running or failed (docs/farm.md,
 * docs/sitesync.md). Each count uses the partial index of its state, bounded by a statement timeout.
 */
import type { Knex } from '@mikro-orm/postgresql';

export interface QueueDepths {
  /** farm_chunk rows by state (queued, leased) of jobs still open. */
  farm: Record<'queued' | 'leased', number>;
  /** sitesync_state rows by status (queued, in_progress, failed). */
  sitesync: Record<'queued' | 'in_progress' | 'failed', number>;
}

const DEPTH_SQL = `
  select 'farm' as queue, state as state, count(*)::int as n from records.farm_chunk
   where state in ('queued', 'leased') group by state
  union all
  select 'sitesync', status, count(*)::int from records.sitesync_state
   where status in ('queued', 'in_progress', 'failed') group by status`;

/** Counts the queues in one read-only statement of at most `timeoutMs`. */
export async function readQueueDepths(db: Knex, timeoutMs = 2000): Promise<QueueDepths> {
  const depths: QueueDepths = { farm: { queued: 0, leased: 0 }, sitesync: { queued: 0, in_progress: 0, failed: 0 } };
  const rows = await db.transaction(async (trx) => {
    await trx.raw(`set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const r = await trx.raw<{ rows: { queue: 'farm' | 'sitesync'; state: string; n: number }[] }>(DEPTH_SQL);
    return r.rows;
  });
  for (const row of rows) (depths[row.queue] as Record<string, number>)[row.state] = row.n;
  return depths;
}
