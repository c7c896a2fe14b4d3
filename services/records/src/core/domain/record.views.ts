/**
 * The work views (docs/api-notes.md, "Work views"): the notes of one record, the tasks of one
 * user and one user's timesheet. Each is one indexed read of live records
 * (docs/architecture.md, "Work view indexes"); nothing here writes. A caller who may not read every
 * project (membershipOf) sees none of the records of a project they may not read: the record named
 * is not found, and the lists leave such records out (docs/api-notes.md, "Restricted projects").
 */
import { AppError, isUuid, mayReadUserViews, timesheetRangeProblems, USER_VIEWS_NOT_YOURS, type CallContext } from '@reelbase/lib-platform';
import { toView, type StoredRecord } from '../../kernel/domain/record.ports.js';
import type { RecordView } from '../../kernel/domain/record.types.js';
import { type RecordViewStore } from './core.ports.js';
import { membershipOf, type RestrictedProject } from '../../kernel/domain/project.readers.js';

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

/**
 * The largest answer a view gives, counted as the JSON of its records: under the 16 MiB gRPC
 * message limit with room for the columns and framing. A view past it is refused (413) rather than
 * failing in transport; a query with filters and pages reads such a list.
 */
export const MAX_VIEW_BYTES = 12 * 1024 * 1024;

/** Bytes a record adds to an answer beyond its `data` (ids, timestamps, field framing). */
const RECORD_OVERHEAD_BYTES = 400;

export class RecordViews {
  constructor(
    private readonly store: RecordViewStore,
    private readonly maxBytes = MAX_VIEW_BYTES,
  ) {}

  /** Notes linking the live record `entityType`/`id`, oldest first; 404 when there is no such live record the caller may read. */
  async notes(entityType: string, id: string, ctx: CallContext): Promise<RecordView[]> {
    const reader = membershipOf(ctx.principal);
    await this.live(entityType, id, reader);
    return this.answer(await this.store.notesLinking(entityType, id.toLowerCase(), reader));
  }

  /** The tasks assigned to the live User `userId` that the caller may read. */
  async userTasks(userId: string, ctx: CallContext): Promise<RecordView[]> {
    this.mayRead(userId, ctx);
    await this.live('User', userId);
    return this.answer(await this.store.tasksAssignedTo(userId.toLowerCase(), membershipOf(ctx.principal)));
  }

  /** The TimeLogs of the live User `userId` dated within [from, to] that the caller may read, and their total minutes. */
  async timesheet(userId: string, from: string, to: string, ctx: CallContext): Promise<Timesheet> {
    this.mayRead(userId, ctx);
    const problems = timesheetRangeProblems(from, to);
    if (problems.length) throw AppError.invalid(problems);
    await this.live('User', userId);
    const timeLogs = this.answer(await this.store.timeLogsOf(userId.toLowerCase(), from, to, membershipOf(ctx.principal)));
    return { timeLogs, totalMinutes: totalMinutes(timeLogs) };
  }

  /** Every restricted project and its members, for the services that filter event streams by them. */
  async restrictedProjects(ctx: CallContext): Promise<RestrictedProject[]> {
    const p = ctx.principal;
    if (!p || p.authKind !== 'service') throw new AppError('forbidden', 'only a service lists restricted projects');
    return this.store.restrictedProjects();
  }

  /** The rows as views; 413 when their JSON would pass the answer budget. */
  private answer(rows: StoredRecord[]): RecordView[] {
    let bytes = 0;
    for (const r of rows) {
      bytes += RECORD_OVERHEAD_BYTES + Buffer.byteLength(JSON.stringify(r.data));
      if (bytes > this.maxBytes) {
        throw new AppError(
          'too_large',
          `the answer would exceed ${Math.floor(this.maxBytes / 1024)} KiB (${rows.length} records); read it in pages with POST /entities/{Type}/query`,
        );
      }
    }
    return rows.map(toView);
  }

  /** 403 unless the caller is the user or may read anyone's views (checked before anything else). */
  private mayRead(userId: string, ctx: CallContext): void {
    const p = ctx.principal;
    if (!p || !mayReadUserViews(p, userId)) throw new AppError('forbidden', USER_VIEWS_NOT_YOURS);
  }

  private async live(entityType: string, id: string, reader: string | null = null): Promise<void> {
    const row = isUuid(id) ? await this.store.find(id.toLowerCase(), reader) : undefined;
    if (!row || row.retired || row.entityType !== entityType) throw AppError.notFound(`${entityType} ${id} not found`);
  }
}
