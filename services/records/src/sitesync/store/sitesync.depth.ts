/** Site sync's queue depth for `sitesync_states{status}`: states waiting, running or failed (the partial index of each status). */
import type { Knex } from '@mikro-orm/postgresql';
import { readQueueDepth } from '../../kernel/store/queue.depth.js';

export const SITESYNC_QUEUE_STATUSES = ['queued', 'in_progress', 'failed'] as const;

export function readSiteSyncDepth(db: Knex): Promise<Record<(typeof SITESYNC_QUEUE_STATUSES)[number], number>> {
  return readQueueDepth(
    db,
    `select status as label, count(*)::int as n from records.sitesync_state where status in ('queued', 'in_progress', 'failed') group by status`,
    SITESYNC_QUEUE_STATUSES,
  );
}
