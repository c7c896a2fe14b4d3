import { describe, expect, it } from 'vitest';
import { QueryBody } from '../schemas/query.schema.js';
import { RecordCreate, RecordPatch } from '../schemas/record.schema.js';
import { createRecordRequest, queryPageJson, queryRecordsRequest, updateRecordRequest } from './entity.mapper.js';

const REC = { id: 'r', entityType: 'Shot', active: true, createdAt: 'a', updatedAt: 'b', dataJson: '{}' };

describe('entity mapper', () => {
  it('maps a create (null as none) and a patch (absent kept, null cleared, a value set)', () => {
    const keyed = { pathParams: ['entity_type'], queryParams: [] };
    expect(createRecordRequest('Shot', RecordCreate.parse({ status: null, data: { code: 'x' } }), keyed)).toMatchObject({
      entityType: 'Shot',
      status: undefined,
      dataJson: '{"code":"x"}',
      keyed,
    });
    const patch = updateRecordRequest('Shot', 'r', RecordPatch.parse({ status: null, project_id: '0190a0b0-0000-7000-8000-000000000001' }), '*');
    expect(patch).toMatchObject({
      status: {},
      projectId: { value: '0190a0b0-0000-7000-8000-000000000001' },
      thumbnailId: undefined,
      dataJson: undefined,
      ifMatch: '*',
    });
  });

  it('asks for a query answered as JSON text and splices the page as records wrote it', () => {
    expect(queryRecordsRequest('Shot', QueryBody.parse({ filters: [] }))).toMatchObject({ filtersJson: '[]', includeTotal: false, answerJson: true });
    expect(queryPageJson({ items: [], itemsJson: '[{"id":"r"}]', total: 1 })).toBe('{"items":[{"id":"r"}],"next_cursor":null,"total":1}');
    expect(JSON.parse(queryPageJson({ items: [REC], nextCursor: 'c' }))).toMatchObject({ items: [{ id: 'r', data: {} }], next_cursor: 'c' });
  });
});
