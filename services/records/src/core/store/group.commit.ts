/**
 * Group commit of creates (docs/architecture.md, "The write path and its events"): creates that
 * reach the store while an earlier group is being written wait for it, and then go together as
 * ONE statement (so one transaction and one commit): every record, its outbox row and, by the
 * table's triggers, its link rows. Each create is answered only once that statement has committed.
 * With nothing in flight a create goes at once, alone, so a lone writer waits for nobody.
 *
 * Each create keeps its own checks inside the group's statement: its project live, the stored
 * schema version the one it was validated against, its link targets live, and for a writer who may
 * not read every project, its project and link targets readable by them (`probe`, the membership
 * probe of kernel/domain/project.readers.ts; null for everyone else). A create that fails them
 * is simply not written and hears so (the caller asks why, as for a lone create); its neighbours
 * are written. A statement that fails as a whole (a reused id, a constraint) is retried one create
 * per statement, so the failing create fails alone.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { pgPlaceholders, queryPrepared, type OutboxEntry } from '@reelbase/lib-platform';
import type { NewRecord, StoredRecord } from '../../kernel/domain/record.ports.js';
import { recordsOutbox, stampedPayload } from '../../kernel/store/outbox.repository.js';
import { COLUMNS, liveLinkTarget, toStored, type RecordRepository, type Row } from '../../kernel/store/record.repository.js';
import { SCHEMA_SHARED_LOCK_SQL, SCHEMA_VERSION_SQL } from '../../kernel/store/schema.repository.js';
import type { WriteGuard } from '../../kernel/domain/record.ports.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import { readableSql } from '../../kernel/store/project.readers.sql.js';

/** An outbox row as a write stores it. */
export type OutboxRowInput = OutboxEntry;

interface Pending {
  record: NewRecord;
  event: OutboxRowInput;
  guard: WriteGuard;
  resolve(row: StoredRecord | undefined): void;
  reject(err: unknown): void;
}

/** Largest group written by one statement; the rest wait for the next. */
export const MAX_GROUP = 256;

/** The reader rule for row `alias` of a create whose writer's probe is `v.probe` (null: reads every project). */
const readableTo = (alias: string) => `(v.probe is null or ${readableSql(alias, 'v.probe')})`;

/**
 * The group's statement: one row of `v` per create (its values, its event, the schema version it
 * was validated against, its writer's membership probe), its links as `(i, id, type)` rows; inserts
 * those whose project and links are live (and readable by their writer), in the group's order, with
 * their outbox rows, and returns the inserted records.
 */
export const GROUP_INSERT_SQL = `with v as materialized (
    select u.*, clock_timestamp() as ts
      from unnest(?::int[], ?::uuid[], ?::text[], ?::uuid[], ?::text[], ?::boolean[], ?::uuid[], ?::uuid[], ?::jsonb[],
                  ?::bigint[], ?::uuid[], ?::text[], ?::jsonb[], ?::jsonb[])
           u(i, id, entity_type, project_id, status, active, thumbnail_id, created_by, data, schema_version, event_id, subject, payload, probe)
  ),
  r as (
    insert into records.record
      (id, entity_type, project_id, status, active, thumbnail_id, created_by, created_at, updated_at, data)
    select v.id, v.entity_type, v.project_id, v.status, v.active, v.thumbnail_id, v.created_by, v.ts, v.ts, v.data from v
     where (v.project_id is null
        or exists (select 1 from records.record p
                    where p.id = v.project_id and p.entity_type = 'Project' and p.retired_at is null and ${readableTo('p')}))
       and ${SCHEMA_SHARED_LOCK_SQL} and ${SCHEMA_VERSION_SQL} = v.schema_version
       and not exists (select 1 from unnest(?::int[], ?::uuid[], ?::text[]) l(i, id, t)
                        where l.i = v.i and not ${liveLinkTarget(` and ${readableTo('x')}`)})
     order by v.i
    returning ${COLUMNS}
  ),
  o as (
    ${recordsOutbox.insertFrom(`select v.event_id, v.subject, ${stampedPayload('v.payload', 'r.updated_at')} from r join v on v.id = r.id order by v.i`)}
  )
  select * from r`;

/** {@link GROUP_INSERT_SQL} as `pg` takes it, prepared once per connection like a lone create's insert. */
const GROUP_INSERT_PG_SQL = pgPlaceholders(GROUP_INSERT_SQL);

/** The bindings of {@link GROUP_INSERT_SQL} for `group`. */
export function groupInsertBindings(group: readonly Pick<Pending, 'record' | 'event' | 'guard'>[]): unknown[] {
  const col = <T>(f: (p: Pick<Pending, 'record' | 'event' | 'guard'>) => T): T[] => group.map(f);
  const links = group.flatMap((p, i) => p.guard.links.map((l) => ({ i, id: l.id, type: l.type })));
  return [
    group.map((_, i) => i),
    col((p) => p.record.id),
    col((p) => p.record.entityType),
    col((p) => p.record.projectId),
    col((p) => p.record.status),
    col((p) => p.record.active),
    col((p) => p.record.thumbnailId),
    col((p) => p.record.createdBy),
    col((p) => JSON.stringify(p.record.data)),
    col((p) => p.guard.schemaVersion),
    col((p) => p.event.eventId),
    col((p) => p.event.subject),
    col((p) => p.event.json),
    col((p) => (p.guard.reader ? membershipProbe(p.guard.reader) : null)),
    links.map((l) => l.i),
    links.map((l) => l.id),
    links.map((l) => l.type),
  ];
}

export class GroupCommit {
  private queue: Pending[] = [];
  private inFlight = 0;

  constructor(
    private readonly db: Knex,
    /** Writes a create on its own (a group of one, or each create of a group whose statement failed). */
    private readonly records: RecordRepository,
    /** Groups written at the same time (each on its own connection). */
    private readonly maxInFlight = 1,
  ) {}

  /** Writes `record` and its outbox row with the next group; undefined when its checks failed (nothing written). */
  insert(record: NewRecord, event: OutboxRowInput, guard: WriteGuard): Promise<StoredRecord | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, event, guard, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.queue.splice(0, MAX_GROUP);
      this.inFlight += 1;
      void this.write(group).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async write(group: Pending[]): Promise<void> {
    if (group.length === 1) return this.alone(group[0]!);
    let rows: Row[];
    try {
      rows = await queryPrepared<Row>(this.db, GROUP_INSERT_PG_SQL, groupInsertBindings(group));
    } catch {
      // One create broke the statement (a reused id, a constraint): each on its own, so it fails alone.
      await Promise.all(group.map((p) => this.alone(p)));
      return;
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const p of group) {
      const row = byId.get(p.record.id);
      p.resolve(row ? toStored(row) : undefined);
    }
  }

  /** One create in its own statement: records' single insert (RecordRepository.insertWithEvent). */
  private async alone(p: Pending): Promise<void> {
    try {
      p.resolve(await this.records.insertWithEvent(p.record, p.event, p.guard));
    } catch (err) {
      p.reject(err);
    }
  }
}
