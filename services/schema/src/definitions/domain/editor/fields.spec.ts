import { describe, expect, it } from 'vitest';
import { caught, problems, seeded, usage } from '../../../../test/editor.world.js';
import { createField, deleteField, renameOption, updateField } from './fields.js';
import { createStep } from './steps.js';
import { createWorkflow } from './workflows.js';

/** Options `codes`, each labelled by its code in capitals. */
const opts = (...codes: string[]) => codes.map((code) => ({ code, label: code.toUpperCase() }));

function withLens() {
  let doc = createField(seeded(), 'Shot', { code: 'lens', name: 'Lens', type: 'enum', options: opts('a', 'b'), default: 'a' }).doc;
  doc = createStep(doc, { code: 'comp', name: 'Comp' }).doc;
  return createWorkflow(doc, {
    code: 'wf',
    entity_type: 'Shot',
    field: 'lens',
    schemas: [
      { option: 'a', steps: ['comp'] },
      { option: 'b', steps: [] },
    ],
  }).doc;
}

describe('fields', () => {
  it('create: stored with its defaults and one event keyed <Type>.<field>', () => {
    const edit = createField(seeded(), 'Shot', { code: 'fps', name: 'FPS', type: 'integer' });
    expect(edit.result).toEqual({
      code: 'fps',
      name: 'FPS',
      type: 'integer',
      description: '',
      options: [],
      link_types: [],
      required: false,
      default: null,
      builtin: false,
    });
    expect(edit.changes).toEqual([{ kind: 'Schema.Field', key: 'Shot.fps', action: 'create', changes: { entity_type: 'Shot', ...edit.result } }]);
  });

  it('create: duplicate_code, an unknown type 404, and every shape problem at once', () => {
    expect(caught(() => createField(seeded(), 'Shot', { code: 'cut_in', name: 'x', type: 'integer' })).code).toBe('duplicate_code');
    expect(caught(() => createField(seeded(), 'Nope', { code: 'x', name: 'x', type: 'text' })).kind).toBe('not_found');
    const found = problems(() =>
      createField(seeded(), 'Shot', {
        code: 'status',
        name: 'x',
        type: 'integer',
        options: [{ code: 'a', label: 'A' }],
        link_types: ['Nope'],
        default: 'ten',
      }),
    );
    expect(found.map((p) => p.loc)).toEqual([
      ['body', 'code'],
      ['body', 'options'],
      ['body', 'link_types'],
      ['body', 'link_types', 0],
      ['body', 'default'],
    ]);
  });

  it('create: options listed twice and a default that is not an option are 422', () => {
    const found = problems(() => createField(seeded(), 'Shot', { code: 'x', name: 'x', type: 'enum', options: opts('a', 'a'), default: 'z' }));
    expect(found).toEqual([
      { loc: ['body', 'options', 1, 'code'], msg: 'a is listed twice' },
      { loc: ['body', 'default'], msg: 'not a valid default for a enum field' },
    ]);
  });

  it('update: dropping an option in use is code_in_use with its usage; the workflow schema of a dropped option goes', () => {
    const doc = withLens();
    const used = caught(() => updateField(doc, 'Shot', 'lens', { options: [{ code: 'a', label: 'A' }] }, usage({ options: { 'Shot.lens.b': 4 } })));
    expect(used.code).toBe('code_in_use');
    expect(used.extra).toEqual({ usage: 4 });
    const edit = updateField(doc, 'Shot', 'lens', { options: [{ code: 'a', label: 'Alpha' }] }, usage({ options: { 'Shot.lens.a': 4 } }));
    expect(edit.result.options).toEqual([{ code: 'a', label: 'Alpha', color: null, builtin: false }]);
    expect(edit.doc.workflows[0]!.schemas.map((s) => s.option)).toEqual(['a']);
  });

  it('update: without per-option counts, any record using the field keeps its options', () => {
    const used = caught(() => updateField(withLens(), 'Shot', 'lens', { options: [{ code: 'a', label: 'A' }] }, usage({ fields: { 'Shot.lens': 2 } })));
    expect(used.code).toBe('code_in_use');
    expect(used.extra).toEqual({ usage: 2 });
  });

  it('update: new options must still hold the default; a built-in option cannot be dropped', () => {
    expect(problems(() => updateField(withLens(), 'Shot', 'lens', { options: [{ code: 'b', label: 'B' }] }, usage()))).toEqual([
      { loc: ['body', 'options'], msg: 'the field default is not among the new options' },
    ]);
    const roles = [{ code: 'Admin', label: 'Admin' }];
    expect(caught(() => updateField(seeded(), 'User', 'role', { options: roles }, usage())).code).toBe('builtin');
  });

  it('delete: builtin, code_in_use with its usage, and the workflows on the field go with it', () => {
    const doc = withLens();
    expect(caught(() => deleteField(doc, 'Shot', 'cut_in', usage())).code).toBe('builtin');
    const used = caught(() => deleteField(doc, 'Shot', 'lens', usage({ fields: { 'Shot.lens': 1 } })));
    expect([used.code, used.extra]).toEqual(['code_in_use', { usage: 1 }]);
    const edit = deleteField(doc, 'Shot', 'lens', usage());
    expect(edit.result).toEqual({ code: 'lens', deleted: true });
    expect(edit.doc.workflows).toEqual([]);
    expect(caught(() => deleteField(doc, 'Shot', 'nope', usage())).kind).toBe('not_found');
  });

  it('rename option: rewrites the default and workflow schemas and plans the cascade; builtin, duplicate_code, 404, 422', () => {
    const doc = withLens();
    const edit = renameOption(doc, 'Shot', 'lens', { from: 'a', to: 'c' });
    expect(edit.rename).toEqual({ kind: 'option', entityType: 'Shot', field: 'lens', from: 'a', to: 'c' });
    const f = edit.doc.entity_types.find((t) => t.code === 'Shot')!.fields.find((x) => x.code === 'lens')!;
    expect([f.options.map((o) => o.code), f.default]).toEqual([['c', 'b'], 'c']);
    expect(edit.doc.workflows[0]!.schemas.map((s) => s.option)).toEqual(['c', 'b']);
    expect(caught(() => renameOption(doc, 'Shot', 'lens', { from: 'a', to: 'b' })).code).toBe('duplicate_code');
    expect(caught(() => renameOption(doc, 'Shot', 'lens', { from: 'z', to: 'y' })).kind).toBe('not_found');
    expect(caught(() => renameOption(doc, 'User', 'role', { from: 'Admin', to: 'Boss' })).code).toBe('builtin');
    expect(problems(() => renameOption(doc, 'Shot', 'cut_in', { from: 'a', to: 'b' }))).toEqual([
      { loc: ['body'], msg: 'Shot.cut_in is a integer field: it has no options' },
    ]);
  });
});
