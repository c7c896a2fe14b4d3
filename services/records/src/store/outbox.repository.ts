/**
 * SQL for the `outbox` table: appended to by writes (inside their transaction), drained
 * in `seq` order by the relay.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StreamEvent } from '@reelbase/lib-platform';
import type { RelaySession } from '../outbox/relay.session.js';
import type { Db } from './record.repository.js';

/** One row waiting to be published. */
export interface OutboxRow {
  seq: string;
  eventId: string;
  subject: string;
  payload: StreamEvent;
}

/** Statements on `records.outbox`. */
export class OutboxRepository {
  /** Appends the event of a write (`json` is its payload serialised); call inside the write's transaction. */
  async append(db: Db, subject: string, eventId: string, json: string): Promise<void> {
    await db.raw('insert into records.outbox (event_id, subject, payload) values (?, ?, ?::jsonb)', [eventId, subject, json]);
  }

  /**
   * One drain step in one statement: deletes the rows published by the previous step and
   * reads the next batch in publication order. The read sees the snapshot from before the
   * delete, so the deleted rows are excluded explicitly.
   */
  async nextBatch(session: RelaySession, published: string[], limit: number): Promise<OutboxRow[]> {
    const rows = await session.query<{ seq: string; event_id: string; subject: string; payload: StreamEvent }>(
      `with d as (delete from records.outbox where seq = any($1::bigint[]))
       select seq, event_id, subject, payload from records.outbox
        where seq <> all($1::bigint[])
        order by seq
        limit $2`,
      [`{${published.join(',')}}`, limit],
    );
    return rows.map((r) => ({ seq: String(r.seq), eventId: r.event_id, subject: r.subject, payload: r.payload }));
  }

  /** Rows still waiting (the `outbox_backlog` gauge). */
  async count(db: Db): Promise<number> {
    const res = await db.raw<{ rows: { n: string }[] }>('select count(*) as n from records.outbox');
    return Number(res.rows[0]?.n ?? 0);
  }
}
