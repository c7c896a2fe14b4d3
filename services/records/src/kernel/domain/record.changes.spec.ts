import { describe, expect, it } from 'vitest';
import { AppError } from '@reelbase/lib-platform';
import { createChanges, dropNulls, jsonEqual, mergeData, parseData, updateChanges } from './record.changes.js';
import type { RecordView } from './record.types.js';

const base: RecordView = {
  id: '0190a000-0000-7000-8000-000000000001',
  entityType: 'Shot',
  projectId: '0190a000-0000-7000-8000-0000000000aa',
  status: null,
  active: true,
  thumbnailId: null,
  createdBy: null,
  createdAt: '2026-01-01T00:00:00.000001Z',
  updatedAt: '2026-01-01T00:00:00.000001Z',
  data: { code: 'sh010', cut_in: 1001 },
};

describe('parseData', () => {
  it('accepts objects and treats empty input as {}', () => {
    expect(parseData('{"a":1}')).toEqual({ a: 1 });
    expect(parseData('')).toEqual({});
    expect(parseData(undefined)).toEqual({});
  });

  it.each(['[1]', '3', 'null', '"x"', '{bad'])('refuses %s at ["body","data"]', (json) => {
    try {
      parseData(json);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).kind).toBe('invalid');
      expect((err as AppError).problems[0]!.loc).toEqual(['data']);
    }
  });
});

describe('mergeData', () => {
  it('sets, replaces and removes key by key, reporting only real changes', () => {
    const { data, changed } = mergeData(
      { code: 'sh010', cut_in: 1001, tags: ['a'], gone: 1 },
      { code: 'sh010', cut_in: 1002, tags: ['a'], gone: null, never: null, added: { x: 1 } },
    );
    expect(data).toEqual({ code: 'sh010', cut_in: 1002, tags: ['a'], added: { x: 1 } });
    expect(changed).toEqual({ cut_in: 1002, gone: null, added: { x: 1 } });
  });

  it('does not modify its input', () => {
    const current = { a: 1 };
    mergeData(current, { a: null });
    expect(current).toEqual({ a: 1 });
  });

  it('sees nested objects with other key order as equal', () => {
    expect(mergeData({ o: { a: 1, b: [1, { c: 2 }] } }, { o: { b: [1, { c: 2 }], a: 1 } }).changed).toEqual({});
    expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
  });
});

describe('changes', () => {
  it('create lists every set column and every data field', () => {
    expect(createChanges(base)).toEqual({ project_id: base.projectId, active: true, code: 'sh010', cut_in: 1001 });
  });

  it('update lists only what changed, cleared columns as null', () => {
    const after: RecordView = { ...base, status: 'ip', projectId: null, data: { code: 'sh010' } };
    expect(updateChanges(base, after, { cut_in: null })).toEqual({ status: 'ip', project_id: null, cut_in: null });
    expect(updateChanges(base, { ...base }, {})).toEqual({});
    expect(updateChanges(base, { ...base, active: false }, {})).toEqual({ active: false });
  });

  it('dropNulls leaves out null values of a new record', () => {
    expect(dropNulls({ a: null, b: 0, c: false })).toEqual({ b: 0, c: false });
  });
});
