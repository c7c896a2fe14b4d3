/**
 * The writer's own PostgreSQL connection. It holds the session-level advisory lock that makes
 * one replica the writer, and every append runs on it too: if the connection dies, the lock
 * and any open transaction go with it, so a writer that lost its lock cannot commit.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { LockedConnection, sqlIsoMicros, type StreamEvent } from '@reelbase/lib-platform';
import { planAppend, type LogRow } from '../domain/append.plan.js';
import { StaleWriterError, type AppendResult, type LogWriterSession } from '../domain/ports.js';

/** The advisory lock key; advisory locks are per database, so one log = one writer. */
export const WRITER_LOCK = 'events:event-log-writer';

export class WriterSession implements LogWriterSession {
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
   * Appends `events` after id `last`: events already in the log (or repeated in the batch)
   * consume no id. Resolves once committed.
   *
   * The usual batch holds no event the log already has, so it is first written as one
   * statement, its own transaction, that inserts every row only if none of the batch's event
   * ids is logged yet (all rows or none: the ids stay gapless). Only when that inserts nothing
   * (a re-delivery after a crash) is the batch planned against the events already logged, in
   * one transaction.
   */
  async append(last: number, events: readonly StreamEvent[]): Promise<AppendResult> {
    const optimistic = planAppend(last, events, new Set());
    if (optimistic.rows.length) {
      const inserted = await this.insertRows(optimistic.rows, 'unless-any-logged');
      if (inserted.length) return { ...optimistic, createdAt: this.createdAtOf(optimistic.rows, inserted) };
    }
    const c = this.conn;
    await c.query('begin');
    try {
      const ids = [...new Set(events.map((e) => e.event_id))];
      const found = await c.query<{ event_id: string }>('select event_id::text as event_id from "events"."event_log" where event_id = any($1::uuid[])', [ids]);
      const plan = planAppend(last, events, new Set(found.map((r) => r.event_id)));
      let createdAt: string[] = [];
      if (plan.rows.length) createdAt = this.createdAtOf(plan.rows, await this.insertRows(plan.rows, 'skip-logged'));
      await c.query('commit');
      return { ...plan, createdAt };
    } catch (err) {
      await c.query('rollback').catch(() => {});
      throw err;
    }
  }

  /**
   * Inserts `rows` in one statement. `unless-any-logged` inserts nothing when one of their
   * event ids is already in the log; `skip-logged` (inside the planning transaction) skips
   * those. A primary-key conflict (another writer's ids) fails the statement.
   */
  private insertRows(r: readonly LogRow[], mode: 'unless-any-logged' | 'skip-logged'): Promise<Array<{ id: string; created_at: string }>> {
    const guard = mode === 'unless-any-logged' ? 'where not exists (select 1 from "events"."event_log" where event_id = any($2::uuid[]))' : '';
    const conflict = mode === 'skip-logged' ? 'on conflict (event_id) do nothing' : '';
    return this.conn.query<{ id: string; created_at: string }>(
      `insert into "events"."event_log"
         (id, event_id, entity_type, entity_id, project_id, action, actor, changes, created_at)
       select * from unnest($1::bigint[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::uuid[], $8::jsonb[], $9::timestamptz[])
       ${guard}
       ${conflict}
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
      // Not a prepared statement (lib-platform's queryPrepared): a generic plan made while the log was
      // small scans it whole (`event_id = any(…)`) until the next analyze (docs/architecture.md).
    );
  }

  /** created_at of each planned row, in row order; throws when the insert did not write every row. */
  private createdAtOf(rows: readonly LogRow[], inserted: ReadonlyArray<{ id: string; created_at: string }>): string[] {
    // Only a concurrent writer could make these differ; committing would leave a gap.
    if (inserted.length !== rows.length) {
      throw new StaleWriterError(`expected ${rows.length} new rows, inserted ${inserted.length}`);
    }
    const byId = new Map(inserted.map((x) => [Number(x.id), x.created_at]));
    return rows.map((x) => byId.get(x.id) ?? '');
  }

  /** Gives the lock up and returns the connection to the pool. */
  close(): Promise<void> {
    return this.conn.release();
  }
}
