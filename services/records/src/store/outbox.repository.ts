/**
 * SQL for the `outbox` table: appended to by writes (inside their transaction), drained
 * in `seq` order by the relay.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { EventPayload } from '../domain/record.types.js';
import type { Db } from './record.repository.js';

/** One row waiting to be published. */
export interface OutboxRow {
  seq: string;
  eventId: string;
  subject: string;
  payload: EventPayload;
}

/** Advisory-lock key: one relay drains at a time across every replica. */
const RELAY_LOCK = 'records:outbox-relay';

/** Statements on `records.outbox`. */
export class OutboxRepository {
  /** Appends the event of a write; call inside the write's transaction. */
  async append(db: Db, subject: string, payload: EventPayload): Promise<void> {
    await db.raw('insert into records.outbox (event_id, subject, payload) values (?, ?, ?::jsonb)', [
      payload.event_id,
      subject,
      JSON.stringify(payload),
    ]);
  }

  /** Takes the relay lock for the rest of `trx`; false when another relay holds it. */
  async tryLock(trx: Knex.Transaction): Promise<boolean> {
    const res = await trx.raw<{ rows: { locked: boolean }[] }>('select pg_try_advisory_xact_lock(hashtext(?)) as locked', [RELAY_LOCK]);
    return res.rows[0]?.locked === true;
  }

  /** The oldest `limit` rows, in publication order. */
  async oldest(db: Db, limit: number): Promise<OutboxRow[]> {
    const res = await db.raw<{ rows: { seq: string; event_id: string; subject: string; payload: EventPayload }[] }>(
      'select seq, event_id, subject, payload from records.outbox order by seq limit ?',
      [limit],
    );
    return res.rows.map((r) => ({ seq: String(r.seq), eventId: r.event_id, subject: r.subject, payload: r.payload }));
  }

  /** Deletes published rows. */
  async remove(db: Db, seqs: string[]): Promise<void> {
    if (seqs.length === 0) return;
    // Bound as one array literal: knex would expand a JS array into a list of parameters.
    await db.raw('delete from records.outbox where seq = any(?::bigint[])', [`{${seqs.join(',')}}`]);
  }

  /** Rows still waiting (the `outbox_backlog` gauge). */
  async count(db: Db): Promise<number> {
    const res = await db.raw<{ rows: { n: string }[] }>('select count(*) as n from records.outbox');
    return Number(res.rows[0]?.n ?? 0);
  }
}
