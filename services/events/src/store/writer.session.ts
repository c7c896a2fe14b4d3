/**
 * The writer's own PostgreSQL connection. It holds the session-level advisory lock that makes
 * one replica the writer, and every append runs on it too: if the connection dies, the lock
 * and any open transaction go with it, so a writer that lost its lock cannot commit.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { LockedConnection, sqlIsoMicros, type StreamEvent } from '@reelbase/lib-platform';
import { planAppend, type AppendPlan } from '../domain/append.plan.js';

/** The advisory lock key; advisory locks are per database, so one log = one writer. */
export const WRITER_LOCK = 'events:event-log-writer';

/** The result of one committed append. */
export interface AppendResult extends AppendPlan {
  /** created_at of each appended row, formatted by the database, in row order. */
  createdAt: string[];
}

/** Thrown when the log holds ids this writer did not expect (another writer wrote). */
export class StaleWriterError extends Error {
  override readonly name = 'StaleWriterError';
}

export class WriterSession {
  private constructor(private readonly conn: LockedConnection) {}

  /** Takes the writer lock on a dedicated connection; null when another session holds it. */
  static async tryOpen(orm: MikroORM): Promise<WriterSession | null> {
    const conn = await LockedConnection.tryAcquire(orm.em.getConnection().getKnex(), WRITER_LOCK);
    return conn ? new WriterSession(conn) : null;
  }

  /** The error that ended the connection, or null while it is alive. */
  get lost(): Error | null {
    return this.conn.lost;
  }

  /** Resolves with the error once the connection is gone. */
  whenLost(): Promise<Error> {
    return this.conn.whenLost();
  }

  /** The highest id in the log (0 when empty). */
  async maxId(): Promise<number> {
    const rows = await this.conn.query<{ last: string }>('select coalesce(max(id), 0) as last from "events"."event_log"');
    return Number(rows[0]?.last ?? 0);
  }

  /** A round trip, so a dead connection is noticed while the stream is quiet. */
  async ping(): Promise<void> {
    await this.conn.query('select 1');
  }

  /**
   * Appends `events` after id `last` in one transaction: events already in the log (or
   * repeated in the batch) consume no id. Resolves once committed.
   */
  async append(last: number, events: readonly StreamEvent[]): Promise<AppendResult> {
    const c = this.conn;
    await c.query('begin');
    try {
      const ids = [...new Set(events.map((e) => e.event_id))];
      const found = await c.query<{ event_id: string }>('select event_id::text as event_id from "events"."event_log" where event_id = any($1::uuid[])', [ids]);
      const plan = planAppend(last, events, new Set(found.map((r) => r.event_id)));
      let createdAt: string[] = [];
      if (plan.rows.length) {
        const r = plan.rows;
        const inserted = await c.query<{ id: string; created_at: string }>(
          `insert into "events"."event_log"
             (id, event_id, entity_type, entity_id, project_id, action, actor, changes, created_at)
           select * from unnest($1::bigint[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::uuid[], $8::jsonb[], $9::timestamptz[])
           on conflict (event_id) do nothing
           returning id, ${sqlIsoMicros('created_at')} as created_at`,
          [
            r.map((x) => x.id),
            r.map((x) => x.event_id),
            r.map((x) => x.entity_type),
            r.map((x) => x.entity_id),
            r.map((x) => x.project_id),
            r.map((x) => x.action),
            r.map((x) => x.actor),
            r.map((x) => JSON.stringify(x.changes)),
            r.map((x) => x.occurred_at),
          ],
        );
        // Only a concurrent writer could make these differ; committing would leave a gap.
        if (inserted.length !== r.length) {
          throw new StaleWriterError(`expected ${r.length} new rows, inserted ${inserted.length}`);
        }
        const byId = new Map(inserted.map((x) => [Number(x.id), x.created_at]));
        createdAt = r.map((x) => byId.get(x.id) ?? '');
      }
      await c.query('commit');
      return { ...plan, createdAt };
    } catch (err) {
      await c.query('rollback').catch(() => {});
      throw err;
    }
  }

  /** Gives the lock up and returns the connection to the pool. */
  close(): Promise<void> {
    return this.conn.release();
  }
}
