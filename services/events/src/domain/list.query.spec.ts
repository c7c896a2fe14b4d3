import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { parseListQuery } from './list.query.js';

const problemsOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('invalid');
    return (err as AppError).problems.map((p) => p.loc);
  }
  throw new Error('expected an error');
};

describe('parseListQuery', () => {
  it('accepts 1 and 1000', () => {
    expect(parseListQuery({ limit: 1 })).toEqual({ limit: 1 });
    expect(parseListQuery({ limit: 1000 })).toEqual({ limit: 1000 });
  });

  it.each([0, -1, 1001, 2.5])('rejects limit %s at query.limit', (limit) => {
    expect(problemsOf(() => parseListQuery({ limit }))).toEqual([['limit']]);
  });

  it('reports every problem at once', () => {
    expect(problemsOf(() => parseListQuery({ limit: 0, after: -1, projectId: 'x' }))).toEqual([['limit'], ['after'], ['project_id']]);
  });

  it('keeps after=0 and treats empty filters as absent', () => {
    expect(parseListQuery({ limit: 5, after: 0, entityType: '', projectId: '' })).toEqual({ limit: 5, after: 0 });
  });

  it('takes before= (newest first below an id) but never with after=', () => {
    expect(parseListQuery({ limit: 5, before: 9 })).toEqual({ limit: 5, before: 9 });
    expect(problemsOf(() => parseListQuery({ limit: 5, before: 0 }))).toEqual([['before']]);
    expect(problemsOf(() => parseListQuery({ limit: 5, before: 9, after: 3 }))).toEqual([['before']]);
  });

  it('normalises project_id', () => {
    const id = '0190F5A4-8D2E-7C3B-9A1F-2B3C4D5E6F72';
    expect(parseListQuery({ limit: 5, projectId: id, entityType: 'Shot' })).toEqual({
      limit: 5,
      projectId: id.toLowerCase(),
      entityType: 'Shot',
    });
  });

  it('takes the hidden projects lower-cased and once each, refuses one that is no UUID, and drops an empty list', () => {
    const id = '0190F5A4-8D2E-7C3B-9A1F-2B3C4D5E6F72';
    expect(parseListQuery({ limit: 5, hiddenProjectIds: [id, id.toLowerCase()] })).toEqual({ limit: 5, hiddenProjectIds: [id.toLowerCase()] });
    expect(parseListQuery({ limit: 5, hiddenProjectIds: [] })).toEqual({ limit: 5 });
    expect(problemsOf(() => parseListQuery({ limit: 5, hiddenProjectIds: [id, 'x'] }))).toEqual([['hidden_project_ids', 1]]);
  });
});
