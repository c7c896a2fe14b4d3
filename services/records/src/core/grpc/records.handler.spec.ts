/**
 * The records handlers: built from one deps object of domain services, they map proto messages to
 * domain calls and domain answers (records in their client form included) back to proto messages.
 */
import type { CallContext } from '@reelbase/lib-platform';
import { describe, expect, it, vi } from 'vitest';
import type { RecordQueries } from '../domain/record.query.js';
import type { RecordService } from '../domain/record.service.js';
import type { ClientRecord, RecordView } from '../../kernel/domain/record.types.js';
import { recordsHandlers, type RecordsHandlerDeps } from './records.handler.js';

const ctx: CallContext = { requestId: 'req-1' };

const client: ClientRecord = {
  id: '0190a0a0-0000-7000-8000-0000000000aa',
  entity_type: 'Shot',
  project_id: '0190a0a0-0000-7000-8000-0000000000bb',
  status: 'wip',
  active: true,
  thumbnail_id: null,
  created_by: null,
  created_at: '2026-01-02T03:04:05.000006Z',
  updated_at: '2026-01-02T03:04:05.000007Z',
  data: { code: 'SH010' },
};

const view: RecordView = {
  id: client.id,
  entityType: 'Shot',
  projectId: client.project_id,
  status: 'wip',
  active: true,
  thumbnailId: null,
  createdBy: null,
  createdAt: client.created_at,
  updatedAt: client.updated_at,
  data: client.data,
};

function deps(over: Partial<RecordsHandlerDeps>): RecordsHandlerDeps {
  const none = {} as never;
  return { records: none, keyed: none, admin: none, views: none, queries: none, summaries: none, ...over };
}

describe('records handlers', () => {
  it('queryRecords maps each record of the client form to a proto Record, or answers them as one JSON array', async () => {
    const query = vi.fn(async () => ({ items: [JSON.stringify(client)], nextCursor: 'next', total: 1 }));
    const handlers = recordsHandlers(deps({ queries: { query } as unknown as RecordQueries }));
    const req = {
      entityType: 'Shot',
      filtersJson: '[]',
      fieldsJson: '',
      order: [{ field: 'code', direction: '' }],
      limit: 10,
      cursor: '',
      includeTotal: true,
      includeRetired: false,
    };

    const answer = await handlers.queryRecords({ ...req, answerJson: false }, ctx);
    expect(query).toHaveBeenCalledWith(
      {
        entityType: 'Shot',
        filtersJson: '[]',
        fieldsJson: '',
        order: [{ field: 'code', direction: undefined }],
        limit: 10,
        cursor: '',
        includeTotal: true,
        includeRetired: false,
      },
      ctx,
    );
    expect(answer).toEqual({
      items: [
        {
          id: client.id,
          entityType: 'Shot',
          projectId: client.project_id,
          status: 'wip',
          active: true,
          thumbnailId: undefined,
          createdBy: undefined,
          createdAt: client.created_at,
          updatedAt: client.updated_at,
          dataJson: '{"code":"SH010"}',
        },
      ],
      nextCursor: 'next',
      total: 1,
    });

    const raw = await handlers.queryRecords({ ...req, answerJson: true }, ctx);
    expect(raw).toEqual({ items: [], itemsJson: `[${JSON.stringify(client)}]`, nextCursor: 'next', total: 1 });
  });

  it('getRecord calls the record service of the deps with the call context (whose reader decides) and answers the proto Record', async () => {
    const get = vi.fn(async () => view);
    const handlers = recordsHandlers(deps({ records: { get } as unknown as RecordService }));
    const answer = await handlers.getRecord({ entityType: 'Shot', id: view.id }, ctx);
    expect(get).toHaveBeenCalledWith('Shot', view.id, ctx);
    expect(answer.record).toMatchObject({ id: view.id, entityType: 'Shot', projectId: view.projectId, thumbnailId: undefined, dataJson: '{"code":"SH010"}' });
  });
});
