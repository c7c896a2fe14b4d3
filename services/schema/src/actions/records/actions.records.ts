/**
 * The {@link ActionRecordsPort} over lib-platform's {@link RecordsClient}: the records an action
 * is listed or run on, read as the caller (live records only).
 */
import { AppError, type CallContext, type RecordsClient } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type { ActionRecord, ActionRecordsPort } from '../domain/actions.ports.js';

function recordOf(r: recordsv1.Record): ActionRecord {
  let data: unknown = {};
  try {
    data = JSON.parse(r.dataJson || '{}');
  } catch {
    throw new AppError('internal', `records answered data of ${r.entityType} ${r.id} that is not JSON`);
  }
  return {
    id: r.id.toLowerCase(),
    entityType: r.entityType,
    projectId: r.projectId ? r.projectId.toLowerCase() : null,
    data: typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {},
  };
}

export class ActionRecords implements ActionRecordsPort {
  constructor(private readonly records: RecordsClient) {}

  async find(entityType: string, id: string, ctx: CallContext): Promise<ActionRecord | null> {
    const r = await this.records.find(entityType, id, ctx);
    return r ? recordOf(r) : null;
  }

  async many(entityType: string, ids: string[], ctx: CallContext): Promise<ActionRecord[]> {
    if (ids.length === 0) return [];
    try {
      const page = await this.records.query(
        {
          entityType,
          filtersJson: JSON.stringify([['id', 'in', ids]]),
          limit: ids.length,
          includeTotal: false,
          includeRetired: false,
          answerJson: false,
          order: [],
        },
        ctx,
      );
      return page.items.map(recordOf);
    } catch (err) {
      // A type the schema does not have holds no record.
      if (err instanceof AppError && err.kind === 'not_found') return [];
      throw err;
    }
  }
}
