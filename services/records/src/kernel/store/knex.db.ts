/**
 * What the records store's hand-written SQL runs on: the service's Knex connection, or a
 * transaction of it (every repository takes either, so a write can join its caller's transaction).
 */
import type { Knex } from '@mikro-orm/postgresql';

/** A connection or a transaction. */
export type Db = Knex | Knex.Transaction;

/**
 * The records service's pools by purpose (docs/architecture.md, "Reaching PostgreSQL"): `writes`,
 * the ORM's pool, for every transaction and statement that writes; `reads`, for the short reads
 * of single records, views, links and lists, so a burst of them never queues behind writes.
 * Queries and summaries have a pool of their own (core/store/query.pool.ts), and so has the farm.
 */
export interface RecordsPools {
  writes: Knex;
  reads: Knex;
}
