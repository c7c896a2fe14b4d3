/** The farm's queue depth for `farm_chunks{state}`: chunks waiting or leased (the partial index of each state). */
import type { Knex } from '@mikro-orm/postgresql';
import { readQueueDepth } from '../../kernel/store/queue.depth.js';

export const FARM_CHUNK_STATES = ['queued', 'leased'] as const;

export function readFarmDepth(db: Knex): Promise<Record<(typeof FARM_CHUNK_STATES)[number], number>> {
  return readQueueDepth(
    db,
    `select state as label, count(*)::int as n from records.farm_chunk where state in ('queued', 'leased') group by state`,
    FARM_CHUNK_STATES,
  );
}
