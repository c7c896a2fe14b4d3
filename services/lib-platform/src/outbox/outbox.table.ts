/**
 * The SQL of one service's outbox table (`<schema>.outbox`: `seq bigserial`, `event_id`,
 * `subject`, `payload jsonb`): appended to by writes inside their transaction, drained in
 * `seq` order by the {@link OutboxRelay}. It is the write kernel of every outbox row: a write
 * that puts its rows and their outbox rows in ONE statement takes the insert from
 * {@link OutboxTable.insertFrom} as a part (a CTE) of that statement; a write that appends
 * apart from its rows, inside its transaction, calls {@link OutboxTable.append} or
 * {@link OutboxTable.appendAll}. No other code writes the table.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StreamEvent } from '../stream-event.js';

/** One row waiting to be published. */
export interface OutboxRow {
  seq: string;
  eventId: string;
  subject: string;
  payload: StreamEvent;
}

/** An outbox row as a write hands it over: `json` is the event's payload, serialised. */
export interface OutboxEntry {
  subject: string;
  eventId: string;
  json: string;
}

/** Runs one statement on the connection that holds the relay lock. */
export interface OutboxSession {
  query<R>(sql: string, params: unknown[]): Promise<R[]>;
}

const QUALIFIED_NAME = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/;

/** Statements on one outbox table, named `schema.table`. */
export class OutboxTable {
  constructor(readonly name: string) {
    if (!QUALIFIED_NAME.test(name)) throw new Error(`outbox table must be named schema.table in lower case, got "${name}"`);
  }

  /**
   * The insert of outbox rows as a part of a larger statement (the body of a CTE, so the rows
   * commit with whatever else the statement writes): `rows` is a query (a select or values) whose columns are, in
   * this order, the event id (uuid), the subject (text) and the payload (jsonb) the relay
   * publishes, one row per event in publication order (its `order by` gives the rows their
   * `seq`). `returning` names columns of the inserted rows to hand back. The text depends on its
   * arguments only, so a prepared statement built around it keeps one text per shape.
   */
  insertFrom(rows: string, returning?: string): string {
    return `insert into ${this.name} (event_id, subject, payload) ${rows}${returning === undefined ? '' : ` returning ${returning}`}`;
  }

  /** Appends an event (`json` is its payload serialised); call inside the write's transaction. */
  async append(db: Knex, subject: string, eventId: string, json: string): Promise<void> {
    await db.raw(this.insertFrom('values (?, ?, ?::jsonb)'), [eventId, subject, json]);
  }

  /**
   * Appends events in one statement, in the given order (their `seq` follows it); call inside
   * the write's transaction.
   */
  async appendAll(db: Knex, entries: readonly OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await db.raw(this.insertFrom('select e, s, p::jsonb from unnest(?::uuid[], ?::text[], ?::text[]) with ordinality as x(e, s, p, n) order by n'), [
      entries.map((e) => e.eventId),
      entries.map((e) => e.subject),
      entries.map((e) => e.json),
    ] as unknown as Knex.RawBinding[]);
  }

  /**
   * One drain step in one statement: deletes the rows in `published` (published by earlier
   * steps) and reads the next batch in publication order, leaving out the rows in `skip`
   * (published, not yet acknowledged). The read sees the snapshot from before the delete, so
   * the deleted rows are excluded explicitly.
   *
   * A step that deletes does not wait for its WAL flush at commit (`synchronous_commit` off for
   * this statement's transaction only, set before its first row is deleted): a delete that a
   * database crash loses re-publishes rows JetStream already has, which it drops as duplicates
   * (and consumers by event id), so the relay need not wait for the disk before it publishes the
   * next rows.
   */
  async nextBatch(session: OutboxSession, published: readonly string[], limit: number, skip: readonly string[] = []): Promise<OutboxRow[]> {
    const rows = await session.query<{ seq: string; event_id: string; subject: string; payload: StreamEvent }>(
      `with d as (delete from ${this.name}
                  where seq = any($1::bigint[]) and (select set_config('synchronous_commit', 'off', true)) is not null)
       select seq, event_id, subject, payload from ${this.name}
        where seq <> all($1::bigint[]) and seq <> all($3::bigint[])
        order by seq
        limit $2`,
      [`{${published.join(',')}}`, limit, `{${skip.join(',')}}`],
    );
    return rows.map((r) => ({ seq: String(r.seq), eventId: r.event_id, subject: r.subject, payload: r.payload }));
  }

  /** Rows still waiting (the backlog gauge). */
  async count(db: Knex): Promise<number> {
    const res = await db.raw<{ rows: { n: string }[] }>(`select count(*) as n from ${this.name}`);
    return Number(res.rows[0]?.n ?? 0);
  }
}
