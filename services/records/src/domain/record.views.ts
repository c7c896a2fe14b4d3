/**
 * The work views (docs/api-notes.md, "Work views"): the notes of one record, the tasks of one
 * user and one user's timesheet. Each is one indexed read of live records
 * (docs/architecture.md, "Work view indexes"); nothing here writes.
 */
import { AppError, isUuid, mayReadUserViews, timesheetRangeProblems, USER_VIEWS_NOT_YOURS, type CallContext } from '@reelbase/lib-platform';
import { toView, type StoredRecord } from './record.store.js';
import type { RecordView } from './record.types.js';

/** The reads the views need; the PostgreSQL implementation is store/views.repository.ts via KnexRecordStore. */
export interface RecordViewStore {
  /** The row with `id`, retired or not. */
  find(id: string): Promise<StoredRecord | undefined>;
  /** Live Notes whose `data.links` contain `{type, id}`, oldest first. */
  notesLinking(type: string, id: string): Promise<StoredRecord[]>;
  /** Live Tasks whose `data.assignees` contain the User `userId`, oldest first. */
  tasksAssignedTo(userId: string): Promise<StoredRecord[]>;
  /** Live TimeLogs whose `data.user` is `userId` and `data.date` lies in [from, to], by date then creation. */
  timeLogsOf(userId: string, from: string, to: string): Promise<StoredRecord[]>;
}

export interface Timesheet {
  timeLogs: RecordView[];
  totalMinutes: number;
}

/** The sum of the TimeLogs' integer `minutes` (a value that is not a number counts 0). */
export function totalMinutes(timeLogs: readonly RecordView[]): number {
  let total = 0;
  for (const t of timeLogs) {
    const m = t.data.minutes;
    if (typeof m === 'number' && Number.isFinite(m)) total += m;
  }
  return total;
}

export class RecordViews {
  constructor(private readonly store: RecordViewStore) {}

  /** Notes linking the live record `entityType`/`id`, oldest first; 404 when there is no such live record. */
  async notes(entityType: string, id: string): Promise<RecordView[]> {
    await this.live(entityType, id);
    return (await this.store.notesLinking(entityType, id.toLowerCase())).map(toView);
  }

  /** The tasks assigned to the live User `userId`. */
  async userTasks(userId: string, ctx: CallContext): Promise<RecordView[]> {
    this.mayRead(userId, ctx);
    await this.live('User', userId);
    return (await this.store.tasksAssignedTo(userId.toLowerCase())).map(toView);
  }

  /** The TimeLogs of the live User `userId` dated within [from, to], and their total minutes. */
  async timesheet(userId: string, from: string, to: string, ctx: CallContext): Promise<Timesheet> {
    this.mayRead(userId, ctx);
    const problems = timesheetRangeProblems(from, to);
    if (problems.length) throw AppError.invalid(problems);
    await this.live('User', userId);
    const timeLogs = (await this.store.timeLogsOf(userId.toLowerCase(), from, to)).map(toView);
    return { timeLogs, totalMinutes: totalMinutes(timeLogs) };
  }

  /** 403 unless the caller is the user or may read anyone's views (checked before anything else). */
  private mayRead(userId: string, ctx: CallContext): void {
    const p = ctx.principal;
    if (!p || !mayReadUserViews(p, userId)) throw new AppError('forbidden', USER_VIEWS_NOT_YOURS);
  }

  private async live(entityType: string, id: string): Promise<void> {
    const row = isUuid(id) ? await this.store.find(id.toLowerCase()) : undefined;
    if (!row || row.retired || row.entityType !== entityType) throw AppError.notFound(`${entityType} ${id} not found`);
  }
}
