/**
 * The scheduler's {@link ScheduleAuthorsPort} over lib-platform's {@link RecordsClient}: the user a
 * schedule runs as is the User record of that id, read as the schema service itself (a retired
 * User reads as missing). Its `data.role` and `data.login_enabled` are what auth reads for every
 * request (docs/api-notes.md, "Authentication"), so a run is refused exactly when that user's own
 * requests would be, or would be refused as an Admin's.
 */
import { AppError, systemContext, type RecordsClient } from '@reelbase/lib-platform';
import type { ScheduleAuthor, ScheduleAuthorsPort } from '../domain/scheduler.ports.js';

export class RecordsScheduleAuthors implements ScheduleAuthorsPort {
  constructor(private readonly records: RecordsClient) {}

  async find(userId: string): Promise<ScheduleAuthor | null> {
    const record = await this.records.find('User', userId, systemContext());
    if (!record) return null;
    let data: unknown;
    try {
      data = JSON.parse(record.dataJson || '{}');
    } catch {
      throw new AppError('internal', `records answered data of User ${userId} that is not JSON`);
    }
    const d = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
    // A role that is missing or not a string grants nothing.
    return { role: typeof d.role === 'string' ? d.role : 'none', canSignIn: d.login_enabled !== false };
  }
}
