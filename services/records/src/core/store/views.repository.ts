/**
 * The reads of the work views (domain/record.views.ts): each is one statement over live records
 * of one type, answered from a partial index of views.migration.ts (docs/architecture.md,
 * "Work view indexes"). Every value is bound. For a caller who may not read every project, each
 * also leaves out the records of projects they may not read (the reader rule,
 * kernel/store/reader.condition.ts), bound last.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StoredRecord } from '../../kernel/domain/record.ports.js';
import type { Db } from '../../kernel/store/knex.db.js';
import { COLUMNS, toStored, type Row } from '../../kernel/store/record.repository.js';
import { RESTRICTED_PROJECTS_SQL } from '../../kernel/store/project.readers.sql.js';
import { andReadable } from '../../kernel/store/reader.condition.js';
import type { RestrictedProject } from '../../kernel/domain/project.readers.js';

async function many(db: Db, sql: string, params: readonly unknown[]): Promise<StoredRecord[]> {
  const res = await db.raw<{ rows: Row[] }>(sql, params as Knex.RawBinding[]);
  return res.rows.map(toStored);
}

/** `[{"type": type, "id": id}]`: the jsonb a multi_link must contain to name that record. */
const linkArray = (type: string, id: string): string => JSON.stringify([{ type, id }]);

/** Notes linking a record; binds `[{"type","id"}]` as JSON (then the reader's probe, with `readable`). */
const notesSql = (readable = '') => `select ${COLUMNS} from records.record
  where entity_type = 'Note' and retired_at is null and data->'links' @> ?::jsonb${readable}
  order by record.created_at, id`;
export const NOTES_SQL = notesSql();

/** Tasks assigned to a user; binds `[{"type":"User","id"}]` as JSON (then the reader's probe, with `readable`). */
const tasksSql = (readable = '') => `select ${COLUMNS} from records.record
  where entity_type = 'Task' and retired_at is null and data->'assignees' @> ?::jsonb${readable}
  order by record.created_at, id`;
export const TASKS_SQL = tasksSql();

/** A user's TimeLogs in a date range; binds the user id, then from and to (`YYYY-MM-DD`) (then the reader's probe, with `readable`). */
const timeLogsSql = (readable = '') => `select ${COLUMNS} from records.record
  where entity_type = 'TimeLog' and retired_at is null
    and (data->'user'->>'id') = ? and (data->>'date') between ? and ?${readable}
  order by data->>'date', record.created_at, id`;
export const TIMELOGS_SQL = timeLogsSql();

/** `sql` with the reader rule on its rows for `reader` (nothing added for a reader of everything), and its bindings. */
function forReader(sql: (readable?: string) => string, params: unknown[], reader: string | null | undefined): [string, unknown[]] {
  const readable = andReadable('record', reader);
  return [sql(readable.sql), [...params, ...readable.bindings]];
}

/** Statements of the work views. */
export class ViewsRepository {
  constructor(private readonly db: Db) {}

  /** Live Notes whose `data.links` contain the record, oldest first (record_note_links_idx). */
  notesLinking(type: string, id: string, reader?: string | null): Promise<StoredRecord[]> {
    return many(this.db, ...forReader(notesSql, [linkArray(type, id)], reader));
  }

  /** Live Tasks whose `data.assignees` contain the User, oldest first (record_task_assignees_idx). */
  tasksAssignedTo(userId: string, reader?: string | null): Promise<StoredRecord[]> {
    return many(this.db, ...forReader(tasksSql, [linkArray('User', userId)], reader));
  }

  /**
   * Live TimeLogs of the User dated within [from, to] (record_timelog_user_date_idx). Dates are
   * stored as `YYYY-MM-DD` text, so text order is date order.
   */
  timeLogsOf(userId: string, from: string, to: string, reader?: string | null): Promise<StoredRecord[]> {
    return many(this.db, ...forReader(timeLogsSql, [userId, from, to], reader));
  }

  /** Every restricted project with its member ids (record_restricted_project_idx). */
  async restrictedProjects(): Promise<RestrictedProject[]> {
    const res = await this.db.raw<{ rows: Array<{ id: string; member_ids: string[] }> }>(RESTRICTED_PROJECTS_SQL);
    return res.rows.map((r) => ({ id: r.id, memberIds: r.member_ids }));
  }
}
