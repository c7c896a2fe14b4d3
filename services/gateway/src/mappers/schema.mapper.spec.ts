import { SCHEMA_OPERATIONS } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { catalogQuery, schemaAnswerText, schemaRequest, schemaRouteParts } from './schema.mapper.js';

describe('schema mapper', () => {
  it('sends a change with its body as JSON and the codes its operation names', () => {
    const parts = schemaRouteParts({ params: { entity_code: 'Shot', field_code: 'lens' }, query: {}, body: { label: 'Lens' } });
    const req = schemaRequest(SCHEMA_OPERATIONS.updateField, parts);
    expect(req).toEqual({ bodyJson: '{"label":"Lens"}', code: '', subCode: 'lens', entityCode: 'Shot' });
    expect(
      schemaRequest(SCHEMA_OPERATIONS.deleteField, schemaRouteParts({ params: { entity_code: 'Shot', field_code: 'lens' }, query: undefined, body: undefined }))
        .bodyJson,
    ).toBe('');
  });

  it('sends a catalog read with its query, and passes answers on as they came', () => {
    expect(catalogQuery(schemaRouteParts({ params: undefined, query: { project_id: 'p', step: 's' }, body: undefined }))).toEqual({
      projectId: 'p',
      step: 's',
    });
    expect(schemaAnswerText({ json: '{"a":1}' })).toBe('{"a":1}');
    expect(schemaAnswerText({ json: '' })).toBe('{}');
  });
});
