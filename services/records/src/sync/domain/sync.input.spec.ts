import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { parseSyncImport } from './sync.input.js';

const problemsOf = (body: unknown): unknown[] => {
  try {
    parseSyncImport(JSON.stringify(body));
  } catch (err) {
    if (err instanceof AppError) return err.problems.map((p) => p.loc);
    throw err;
  }
  throw new Error('expected a refusal');
};

describe('parseSyncImport', () => {
  it('reads a batch: project by external id or id, status, dry run', () => {
    const input = parseSyncImport(
      JSON.stringify({
        source: 'shotgrid',
        dry_run: true,
        items: [
          { external_id: '1', entity_type: 'Shot', project_external_id: '70', status: 'wtg', data: { code: 'a' } },
          { external_id: '2', entity_type: 'Shot', project_id: '0193C9E8-0000-7000-8000-000000000001', data: {} },
        ],
      }),
    );
    expect(input).toEqual({
      source: 'shotgrid',
      dryRun: true,
      items: [
        { externalId: '1', entityType: 'Shot', projectExternalId: '70', status: 'wtg', data: { code: 'a' } },
        { externalId: '2', entityType: 'Shot', projectId: '0193c9e8-0000-7000-8000-000000000001', data: {} },
      ],
    });
  });

  it('refuses every problem at once, located under items', () => {
    expect(
      problemsOf({
        source: 'Shot Grid',
        extra: 1,
        items: [
          { external_id: '', entity_type: 'Shot', data: {} },
          { external_id: 'x', entity_type: 'Shot', project_id: 'nope', project_external_id: 'p', data: [], typo: 1 },
        ],
      }),
    ).toEqual([
      ['extra'],
      ['source'],
      ['items', 0, 'external_id'],
      ['items', 1, 'typo'],
      ['items', 1, 'project_id'],
      ['items', 1, 'project_id'],
      ['items', 1, 'data'],
    ]);
    expect(problemsOf({ source: 'sg', items: [] })).toEqual([['items']]);
    expect(problemsOf({ source: 'sg', items: Array.from({ length: 1001 }, (_, i) => ({ external_id: `${i}`, entity_type: 'Shot', data: {} })) })).toEqual([
      ['items'],
    ]);
  });
});
