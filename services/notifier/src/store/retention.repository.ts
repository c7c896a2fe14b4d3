/**
 * Retention of the delivery log (docs/notifier.md, "Retention"): delivered deliveries older than
 * the retention period are deleted, and so are the event bodies no delivery refers to any more.
 * Finished deliveries of webhook actions (delivered or dead; they are listed nowhere) go too.
 * Pending and dead webhook deliveries are never deleted here (a dead one stays listed and retryable until it
 * is retried or its webhook is deleted). Deletes go in batches, each its own short statement, so a
 * large backlog never holds locks for long; rows are picked with `SKIP LOCKED`, so replicas pruning
 * at the same time share the work instead of waiting on each other.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type { RetentionStore } from '../domain/ports.js';

/**
 * The smallest UUID v7 of millisecond `ms`: every id made before that millisecond sorts below it.
 * Delivery ids are UUID v7, so the primary key finds the old rows without an index of its own.
 */
export function uuidV7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

export class RetentionRepository implements RetentionStore {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  /**
   * Deletes up to `batch` delivered deliveries created before `cutoff` and delivered before it.
   * Returns how many it deleted.
   */
  pruneDelivered(cutoff: Date, batch: number): Promise<number> {
    return guarded(async () => {
      const res = await this.db.raw<{ rowCount: number }>(
        `delete from notifier.delivery where id in (
         select id from notifier.delivery
          where id < ?::uuid and status = 'delivered' and delivered_at < ?
          order by id limit ? for update skip locked)`,
        [uuidV7Floor(cutoff.getTime()), cutoff, batch],
      );
      // Deliveries of webhook actions are listed nowhere: finished ones (delivered or dead) go too.
      const actions = await this.db.raw<{ rowCount: number }>(
        `delete from notifier.action_delivery where id in (
         select id from notifier.action_delivery
          where id < ?::uuid and status <> 'pending' and coalesce(delivered_at, last_attempt_at) < ?
          order by id limit ? for update skip locked)`,
        [uuidV7Floor(cutoff.getTime()), cutoff, batch],
      );
      return res.rowCount + actions.rowCount;
    });
  }

  /**
   * Deletes up to `batch` event bodies of events before `cutoff` that no delivery refers to.
   * Returns how many it deleted.
   */
  pruneBodies(cutoff: Date, batch: number): Promise<number> {
    return guarded(async () => {
      const res = await this.db.raw<{ rowCount: number }>(
        `delete from notifier.event_body where id in (
         select e.id from notifier.event_body e
          where e.event_at < ? and not exists (select 1 from notifier.delivery d where d.event_id = e.id)
          order by e.id limit ? for update of e skip locked)`,
        [cutoff, batch],
      );
      return res.rowCount;
    });
  }
}
