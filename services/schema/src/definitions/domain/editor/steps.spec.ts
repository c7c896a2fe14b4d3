import { describe, expect, it } from 'vitest';
import { caught, problems, seeded, usage } from '../../../../test/editor.world.js';
import { createStep, deleteStep, renameStep, reorderSteps, updateStep } from './steps.js';
import { createWorkflow, setTaskTemplates } from './workflows.js';

/** Steps layout, anim, comp; a workflow and a task template using anim. */
function withSteps() {
  let doc = seeded();
  for (const code of ['layout', 'anim', 'comp']) doc = createStep(doc, { code, name: code }).doc;
  doc = createWorkflow(doc, { code: 'wf', schemas: [{ option: 'x', steps: ['anim', 'comp'] }] }).doc;
  return setTaskTemplates(doc, { templates: [{ code: 't', name: 'T', entity_type: 'Shot', tasks: [{ name: 'Animate', step: 'anim' }] }] }).doc;
}

describe('steps', () => {
  it('create: comes last; duplicate_code; an unknown type is 422', () => {
    const doc = withSteps();
    expect(doc.steps.map((s) => s.code)).toEqual(['layout', 'anim', 'comp']);
    expect(caught(() => createStep(doc, { code: 'anim', name: 'x' })).code).toBe('duplicate_code');
    expect(problems(() => createStep(doc, { code: 'x', name: 'x', entity_types: ['Nope'] })).map((p) => p.loc)).toEqual([['body', 'entity_types', 0]]);
  });

  it('reorder: every step exactly once, or 422 naming the steps', () => {
    const doc = withSteps();
    expect(reorderSteps(doc, { codes: ['comp', 'layout', 'anim'] }).doc.steps.map((s) => s.code)).toEqual(['comp', 'layout', 'anim']);
    for (const codes of [
      ['comp', 'layout'],
      ['comp', 'comp', 'anim'],
      ['comp', 'layout', 'nope'],
    ]) {
      expect(problems(() => reorderSteps(doc, { codes }))).toEqual([
        { loc: ['body', 'codes'], msg: 'must list every step code exactly once: layout, anim, comp' },
      ]);
    }
  });

  it('update: only the keys given; 404', () => {
    expect(updateStep(withSteps(), 'anim', { name: 'Animation' }).result).toEqual({ code: 'anim', name: 'Animation', color: null, entity_types: [] });
    expect(caught(() => updateStep(withSteps(), 'nope', { name: 'x' })).kind).toBe('not_found');
  });

  it('delete: code_in_use with its usage; otherwise gone from workflows and templates', () => {
    const doc = withSteps();
    const used = caught(() => deleteStep(doc, 'anim', usage({ steps: { anim: 7 } })));
    expect([used.code, used.extra]).toEqual(['code_in_use', { usage: 7 }]);
    const edit = deleteStep(doc, 'anim', usage());
    expect(edit.doc.workflows[0]!.schemas[0]!.steps).toEqual(['comp']);
    expect(edit.doc.task_templates[0]!.tasks).toEqual([]);
    expect(caught(() => deleteStep(doc, 'nope', usage())).kind).toBe('not_found');
  });

  it('rename: workflows and templates follow, the cascade is planned; duplicate_code, 422', () => {
    const doc = withSteps();
    const edit = renameStep(doc, 'anim', { new_code: 'animation' });
    expect(edit.rename).toEqual({ kind: 'step', entityType: '', field: '', from: 'anim', to: 'animation' });
    expect(edit.doc.workflows[0]!.schemas[0]!.steps).toEqual(['animation', 'comp']);
    expect(edit.doc.task_templates[0]!.tasks[0]!.step).toBe('animation');
    expect(caught(() => renameStep(doc, 'anim', { new_code: 'comp' })).code).toBe('duplicate_code');
    expect(problems(() => renameStep(doc, 'anim', { new_code: '-x' })).map((p) => p.loc)).toEqual([['body', 'new_code']]);
  });
});
