/**
 * The relay's hold on an outbox: one pooled connection kept for as long as this replica is
 * the relay, holding a session-level advisory lock. Only the holder drains, so rows leave in
 * order; when the connection dies the lock goes with it and another replica takes over.
 * Keeping one connection also lets a whole drain step be one statement (no BEGIN/COMMIT).
 */
import type { Knex } from '@mikro-orm/postgresql';
import { LockedConnection } from '../db.js';
import type { OutboxSession } from './outbox.table.js';

export class RelaySession implements OutboxSession {
  private conn: LockedConnection | null = null;

  constructor(
    private readonly db: Knex,
    private readonly lockKey: string,
  ) {}

  /** True while this replica holds the relay lock. */
  get held(): boolean {
    return this.conn !== null;
  }

  /** Takes the relay lock if free; false when another replica holds it. */
  async acquire(): Promise<boolean> {
    if (this.conn) return true;
    this.conn = await LockedConnection.tryAcquire(this.db, this.lockKey);
    return this.conn !== null;
  }

  /** Runs `sql` on the held connection; any failure gives the lock up (it is retaken later). */
  async query<R>(sql: string, params: unknown[]): Promise<R[]> {
    if (!this.conn) throw new Error('relay lock not held');
    try {
      return await this.conn.query<R>(sql, params);
    } catch (err) {
      await this.release();
      throw err;
    }
  }

  /** Unlocks and returns the connection to the pool. */
  async release(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    await conn?.release();
  }
}
