/**
 * The relay's hold on the outbox: one pooled connection kept for as long as this replica is
 * the relay, holding a session-level advisory lock. Only the holder drains, so rows leave in
 * order; when the connection dies the lock goes with it and another replica takes over.
 * Keeping one connection also lets a whole drain step be one statement (no BEGIN/COMMIT).
 */
import type { Knex } from '@mikro-orm/postgresql';

/** The subset of a `pg` client the session uses. */
interface PgConnection {
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

const LOCK_KEY = 'records:outbox-relay';

export class RelaySession {
  private conn: PgConnection | null = null;

  constructor(private readonly db: Knex) {}

  /** True while this replica holds the relay lock. */
  get held(): boolean {
    return this.conn !== null;
  }

  /** Takes the relay lock if free; false when another replica holds it. */
  async acquire(): Promise<boolean> {
    if (this.conn) return true;
    const conn = (await this.db.client.acquireConnection()) as PgConnection;
    try {
      const res = await conn.query<{ locked: boolean }>('select pg_try_advisory_lock(hashtext($1)) as locked', [LOCK_KEY]);
      if (res.rows[0]?.locked === true) {
        this.conn = conn;
        return true;
      }
    } catch (err) {
      await this.db.client.releaseConnection(conn).catch(() => {});
      throw err;
    }
    await this.db.client.releaseConnection(conn);
    return false;
  }

  /** Runs `sql` on the held connection; any failure gives the lock up (it is retaken later). */
  async query<R>(sql: string, params: unknown[]): Promise<R[]> {
    if (!this.conn) throw new Error('relay lock not held');
    try {
      return (await this.conn.query<R>(sql, params)).rows;
    } catch (err) {
      await this.release();
      throw err;
    }
  }

  /** Unlocks and returns the connection to the pool. */
  async release(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    await conn.query('select pg_advisory_unlock(hashtext($1))', [LOCK_KEY]).catch(() => {});
    await this.db.client.releaseConnection(conn).catch(() => {});
  }
}
