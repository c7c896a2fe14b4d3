import { describe, expect, it } from 'vitest';
import { caught, problems, seeded, usage } from '../../../../test/editor.world.js';
import { createStatus, deleteStatus, renameStatus, updateStatus } from './statuses.js';
import { setTransitions } from './workflows.js';

/** Statuses ip (every type) and fin (Shot, Asset), with Shot's transitions ip → fin. */
function withStatuses() {
  let doc = createStatus(seeded(), { code: 'ip', name: 'In progress', state: 'in_progress' }).doc;
  doc = createStatus(doc, { code: 'fin', name: 'Final', state: 'done', entity_types: ['Shot', 'Asset'] }).doc;
  return setTransitions(doc, {
    entity_type: 'Shot',
    transitions: [
      { from: 'ip', to: ['fin'] },
      { from: 'fin', to: ['ip'] },
    ],
  }).doc;
}

describe('statuses', () => {
  it('create: scope without repeats, one event; duplicate_code; an unknown type in the scope is 422', () => {
    const edit = createStatus(seeded(), { code: 'ip', name: 'IP', state: 'in_progress', entity_types: ['Shot', 'Shot'] });
    expect(edit.result).toEqual({ code: 'ip', name: 'IP', color: null, icon: null, state: 'in_progress', entity_types: ['Shot'] });
    expect(edit.changes).toEqual([{ kind: 'Schema.Status', key: 'ip', action: 'create', changes: edit.result }]);
    expect(caught(() => createStatus(edit.doc, { code: 'ip', name: 'x', state: 'done' })).code).toBe('duplicate_code');
    expect(problems(() => createStatus(seeded(), { code: 'x', name: 'x', state: 'done', entity_types: ['Shot', 'Nope'] }))).toEqual([
      { loc: ['body', 'entity_types', 1], msg: 'entity type Nope does not exist' },
    ]);
  });

  it('update: only the keys given; 404 for an unknown status', () => {
    const edit = updateStatus(withStatuses(), 'fin', { color: '#00ff00' });
    expect(edit.result).toMatchObject({ code: 'fin', name: 'Final', color: '#00ff00', entity_types: ['Shot', 'Asset'] });
    expect(caught(() => updateStatus(withStatuses(), 'nope', { name: 'x' })).kind).toBe('not_found');
  });

  it('delete: code_in_use with its usage; otherwise gone from every transition', () => {
    const doc = withStatuses();
    const used = caught(() => deleteStatus(doc, 'fin', undefined, usage({ statuses: { fin: 5 } })));
    expect([used.code, used.extra]).toEqual(['code_in_use', { usage: 5 }]);
    const edit = deleteStatus(doc, 'fin', undefined, usage());
    expect(edit.result).toEqual({ code: 'fin', deleted: true });
    expect(edit.doc.transitions.Shot).toEqual([{ from: 'ip', to: [], roles: [] }]);
  });

  it('delete for one type: narrows the scope (every type becomes every other type), counted per type', () => {
    const doc = withStatuses();
    const used = caught(() => deleteStatus(doc, 'fin', 'Shot', usage({ statuses: { fin: 9 }, status_types: { 'Shot.fin': 2 } })));
    expect([used.code, used.extra]).toEqual(['code_in_use', { usage: 2 }]);
    const narrowed = deleteStatus(doc, 'fin', 'Shot', usage({ statuses: { fin: 9 } }));
    expect(narrowed.result).toMatchObject({ code: 'fin', entity_types: ['Asset'] });
    expect(narrowed.doc.transitions.Shot).toEqual([{ from: 'ip', to: [], roles: [] }]);
    const all = deleteStatus(doc, 'ip', 'Shot', usage());
    expect(all.result).toMatchObject({ entity_types: doc.entity_types.map((t) => t.code).filter((c) => c !== 'Shot') });
    expect(caught(() => deleteStatus(doc, 'fin', 'Task', usage())).kind).toBe('not_found');
    // The last type of its scope: the status itself goes, checked against its whole usage.
    const last = deleteStatus(narrowed.doc, 'fin', 'Asset', usage());
    expect(last.result).toEqual({ code: 'fin', deleted: true });
  });

  it('rename: transitions follow and the cascade is planned; duplicate_code, 404, 422', () => {
    const doc = withStatuses();
    const edit = renameStatus(doc, 'ip', { new_code: 'wip' });
    expect(edit.rename).toEqual({ kind: 'status', entityType: '', field: '', from: 'ip', to: 'wip' });
    expect(edit.doc.transitions.Shot).toEqual([
      { from: 'wip', to: ['fin'], roles: [] },
      { from: 'fin', to: ['wip'], roles: [] },
    ]);
    expect(caught(() => renameStatus(doc, 'ip', { new_code: 'fin' })).code).toBe('duplicate_code');
    expect(caught(() => renameStatus(doc, 'nope', { new_code: 'x' })).kind).toBe('not_found');
    expect(problems(() => renameStatus(doc, 'ip', { new_code: 'a/b' })).map((p) => p.loc)).toEqual([['body', 'new_code']]);
  });

  it('the built-in FarmJob statuses: never renamed, deleted or narrowed for FarmJob; other types may share the code', () => {
    const doc = seeded();
    expect(doc.statuses.filter((x) => x.entity_types.includes('FarmJob')).map((x) => x.code)).toEqual([
      'queued',
      'running',
      'done',
      'failed',
      'paused',
      'cancelled',
    ]);
    expect(caught(() => renameStatus(doc, 'done', { new_code: 'complete' })).code).toBe('builtin');
    expect(caught(() => deleteStatus(doc, 'done', undefined, usage())).code).toBe('builtin');
    expect(caught(() => deleteStatus(doc, 'done', 'FarmJob', usage())).code).toBe('builtin');
    expect(caught(() => updateStatus(doc, 'done', { entity_types: ['Shot'] })).code).toBe('builtin');
    const shared = updateStatus(doc, 'done', { entity_types: ['FarmJob', 'Shot'], color: '#00ff00' });
    expect(shared.result).toMatchObject({ code: 'done', entity_types: ['FarmJob', 'Shot'], color: '#00ff00' });
    expect(deleteStatus(shared.doc, 'done', 'Shot', usage()).result).toMatchObject({ entity_types: ['FarmJob'] });
  });
});
