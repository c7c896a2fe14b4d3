/**
 * What the records store's hand-written SQL runs on: the service's Knex connection, or a
 * transaction of it (every repository takes either, so a write can join its caller's transaction).
 */
import type { Knex } from '@mikro-orm/postgresql';

/** A connection or a transaction. */
export type Db = Knex | Knex.Transaction;
