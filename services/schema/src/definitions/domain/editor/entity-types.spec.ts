import { describe, expect, it } from 'vitest';
import { caught, problems, seeded, usage } from '../../../../test/editor.world.js';
import { createEntityType, deleteEntityType, renameEntityType, renameEntityTypeCode } from './entity-types.js';
import { createField } from './fields.js';
import { createStatus } from './statuses.js';
import { createStep } from './steps.js';
import { setTaskTemplates, setTransitions } from './workflows.js';

/** A document with a custom type Camera, linked from a field, a status, a step, transitions and a template. */
function withCamera() {
  let doc = createEntityType(seeded(), { code: 'Camera', name: 'Camera' }).doc;
  doc = createField(doc, 'Shot', { code: 'camera', name: 'Camera', type: 'link', link_types: ['Camera'] }).doc;
  doc = createStatus(doc, { code: 'ok', name: 'OK', state: 'done', entity_types: ['Camera', 'Shot'] }).doc;
  doc = createStep(doc, { code: 'rig', name: 'Rig', entity_types: ['Camera'] }).doc;
  doc = setTransitions(doc, { entity_type: 'Camera', transitions: [{ from: 'ok', to: ['ok'] }] }).doc;
  doc = setTaskTemplates(doc, { templates: [{ code: 'cam', name: 'Cam', entity_type: 'Camera', tasks: [{ name: 'Rig it', step: 'rig' }] }] }).doc;
  return doc;
}

describe('entity types', () => {
  it('create: stored project scoped by default, one create event, the input document untouched', () => {
    const before = seeded();
    const edit = createEntityType(before, { code: 'Camera', name: 'Cameras' });
    expect(edit.result).toEqual({ code: 'Camera', name: 'Cameras', description: '', builtin: false, project_scoped: true, fields: [] });
    expect(edit.changes).toEqual([{ kind: 'Schema.EntityType', key: 'Camera', action: 'create', changes: edit.result }]);
    expect(edit.doc.entity_types.map((t) => t.code)).toContain('Camera');
    expect(before.entity_types.map((t) => t.code)).not.toContain('Camera');
  });

  it('create: an existing code is duplicate_code', () => {
    expect(caught(() => createEntityType(seeded(), { code: 'Shot', name: 'x' })).code).toBe('duplicate_code');
  });

  it('rename: a custom type takes the new name; a built-in one is builtin; an unknown one 404', () => {
    const doc = withCamera();
    expect(renameEntityType(doc, 'Camera', { name: 'Cams' }).result.name).toBe('Cams');
    expect(caught(() => renameEntityType(doc, 'Shot', { name: 'x' })).code).toBe('builtin');
    expect(caught(() => renameEntityType(doc, 'Nope', { name: 'x' })).kind).toBe('not_found');
  });

  it('delete: builtin and code_in_use (with its usage) refuse; otherwise every reference to the type goes', () => {
    const doc = withCamera();
    expect(caught(() => deleteEntityType(doc, 'Shot', usage())).code).toBe('builtin');
    const used = caught(() => deleteEntityType(doc, 'Camera', usage({ entity_types: { Camera: 3 } })));
    expect(used.code).toBe('code_in_use');
    expect(used.extra).toEqual({ usage: 3 });
    const edit = deleteEntityType(doc, 'Camera', usage({ entity_types: { Shot: 9 } }));
    expect(edit.result).toEqual({ code: 'Camera', deleted: true });
    expect(edit.doc.entity_types.some((t) => t.code === 'Camera')).toBe(false);
    expect(edit.doc.entity_types.find((t) => t.code === 'Shot')!.fields.find((f) => f.code === 'camera')!.link_types).toEqual([]);
    expect(edit.doc.statuses.find((x) => x.code === 'ok')!.entity_types).toEqual(['Shot']);
    expect(edit.doc.steps[0]!.entity_types).toEqual([]);
    expect(edit.doc.transitions).toEqual({});
    expect(edit.doc.task_templates).toEqual([]);
  });

  it('rename code: rewrites every reference and plans the cascade; builtin, duplicate_code and a bad code refuse', () => {
    const doc = withCamera();
    const edit = renameEntityTypeCode(doc, 'Camera', { new_code: 'Cam' });
    expect(edit.rename).toEqual({ kind: 'entity_type', entityType: 'Camera', field: '', from: 'Camera', to: 'Cam' });
    expect(edit.changes).toEqual([]);
    expect(edit.result).toEqual({ kind: 'entity_type', entity_type: 'Camera', field: null, old_code: 'Camera', new_code: 'Cam', rewritten: 0 });
    expect(edit.doc.entity_types.find((t) => t.code === 'Shot')!.fields.find((f) => f.code === 'camera')!.link_types).toEqual(['Cam']);
    expect(edit.doc.statuses.find((x) => x.code === 'ok')!.entity_types).toEqual(['Cam', 'Shot']);
    expect(Object.keys(edit.doc.transitions)).toEqual(['Cam']);
    expect(edit.doc.task_templates[0]!.entity_type).toBe('Cam');
    expect(caught(() => renameEntityTypeCode(doc, 'Shot', { new_code: 'Shots' })).code).toBe('builtin');
    expect(caught(() => renameEntityTypeCode(doc, 'Camera', { new_code: 'Asset' })).code).toBe('duplicate_code');
    expect(problems(() => renameEntityTypeCode(doc, 'Camera', { new_code: 'camera' }))).toEqual([
      { loc: ['body', 'new_code'], msg: expect.stringMatching(/^must match /) },
    ]);
  });
});
