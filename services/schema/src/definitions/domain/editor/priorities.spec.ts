import { describe, expect, it } from 'vitest';
import { caught, problems, seeded, usage } from '../../../../test/editor.world.js';
import { createPriority, deletePriority, renamePriority, updatePriority } from './priorities.js';

function withPriorities() {
  let doc = createPriority(seeded(), { code: 'high', name: 'High', rank: 3 }).doc;
  doc = createPriority(doc, { code: 'low', name: 'Low', rank: 1 }).doc;
  return createPriority(doc, { code: 'mid', name: 'Mid', rank: 1 }).doc;
}

describe('priorities', () => {
  it('create: kept in rank order (code breaks ties); duplicate_code', () => {
    const doc = withPriorities();
    expect(doc.priorities.map((p) => p.code)).toEqual(['low', 'mid', 'high']);
    expect(caught(() => createPriority(doc, { code: 'high', name: 'x', rank: 0 })).code).toBe('duplicate_code');
  });

  it('update: a new rank re-sorts; 404', () => {
    const edit = updatePriority(withPriorities(), 'high', { rank: 0 });
    expect(edit.doc.priorities.map((p) => p.code)).toEqual(['high', 'low', 'mid']);
    expect(edit.changes).toEqual([{ kind: 'Schema.Priority', key: 'high', action: 'update', changes: { code: 'high', name: 'High', color: null, rank: 0 } }]);
    expect(caught(() => updatePriority(withPriorities(), 'nope', { rank: 0 })).kind).toBe('not_found');
  });

  it('delete: code_in_use with its usage; 404', () => {
    const used = caught(() => deletePriority(withPriorities(), 'low', usage({ priorities: { low: 1 } })));
    expect([used.code, used.extra]).toEqual(['code_in_use', { usage: 1 }]);
    expect(deletePriority(withPriorities(), 'low', usage({ priorities: { mid: 1 } })).doc.priorities.map((p) => p.code)).toEqual(['mid', 'high']);
    expect(caught(() => deletePriority(withPriorities(), 'nope', usage())).kind).toBe('not_found');
  });

  it('rename: plans the cascade; duplicate_code, 422', () => {
    const edit = renamePriority(withPriorities(), 'high', { new_code: 'urgent' });
    expect(edit.rename).toEqual({ kind: 'priority', entityType: '', field: '', from: 'high', to: 'urgent' });
    expect(caught(() => renamePriority(withPriorities(), 'high', { new_code: 'low' })).code).toBe('duplicate_code');
    expect(problems(() => renamePriority(withPriorities(), 'high', { new_code: '' })).map((p) => p.loc)).toEqual([['body', 'new_code']]);
  });
});
