import { describe, expect, it } from 'vitest';
import { caught, problems, seeded } from '../../../../test/editor.world.js';
import { createField } from './fields.js';
import { createStatus } from './statuses.js';
import { createStep } from './steps.js';
import { createWorkflow, deleteWorkflow, setTaskTemplates, setTransitions } from './workflows.js';

function base() {
  let doc = createField(seeded(), 'Shot', { code: 'kind', name: 'Kind', type: 'enum', options: [{ code: 'cg', label: 'CG' }] }).doc;
  doc = createStep(doc, { code: 'comp', name: 'Comp' }).doc;
  doc = createStatus(doc, { code: 'ip', name: 'IP', state: 'in_progress' }).doc;
  return createStatus(doc, { code: 'final', name: 'Final', state: 'done', entity_types: ['Asset'] }).doc;
}

describe('workflows', () => {
  it('create: the name defaults to the code; duplicate_code', () => {
    const edit = createWorkflow(base(), { code: 'wf', entity_type: 'Shot', field: 'kind', schemas: [{ option: 'cg', steps: ['comp'] }] });
    expect(edit.result).toEqual({ code: 'wf', name: 'wf', entity_type: 'Shot', field: 'kind', schemas: [{ option: 'cg', steps: ['comp'] }] });
    expect(caught(() => createWorkflow(edit.doc, { code: 'wf' })).code).toBe('duplicate_code');
  });

  it('create: an unknown type, a field that is not an enum, an unknown option or step are 422 at their place', () => {
    expect(problems(() => createWorkflow(base(), { code: 'wf', entity_type: 'Nope' })).map((p) => p.loc)).toEqual([['body', 'entity_type']]);
    expect(problems(() => createWorkflow(base(), { code: 'wf', field: 'kind' }))).toEqual([{ loc: ['body', 'field'], msg: 'a field needs an entity_type' }]);
    expect(problems(() => createWorkflow(base(), { code: 'wf', entity_type: 'Shot', field: 'cut_in' })).map((p) => p.loc)).toEqual([['body', 'field']]);
    const found = problems(() =>
      createWorkflow(base(), { code: 'wf', entity_type: 'Shot', field: 'kind', schemas: [{ option: 'x', steps: ['comp', 'nope'] }] }),
    );
    expect(found.map((p) => p.loc)).toEqual([
      ['body', 'schemas', 0, 'option'],
      ['body', 'schemas', 0, 'steps', 1],
    ]);
  });

  it('delete: gone; 404 for an unknown one', () => {
    const doc = createWorkflow(base(), { code: 'wf' }).doc;
    expect(deleteWorkflow(doc, 'wf').doc.workflows).toEqual([]);
    expect(caught(() => deleteWorkflow(doc, 'nope')).kind).toBe('not_found');
  });
});

describe('transitions', () => {
  it('set: stored without repeats; an empty list removes the type; statuses must apply to the type', () => {
    const edit = setTransitions(base(), { entity_type: 'Shot', transitions: [{ from: 'ip', to: ['ip', 'ip'], roles: ['Admin', 'Admin'] }] });
    expect(edit.result).toEqual({ entity_type: 'Shot', transitions: [{ from: 'ip', to: ['ip'], roles: ['Admin'] }] });
    expect(setTransitions(edit.doc, { entity_type: 'Shot', transitions: [] }).doc.transitions).toEqual({});
    expect(problems(() => setTransitions(base(), { entity_type: 'Shot', transitions: [{ from: 'final', to: ['ip', 'nope'] }] })).map((p) => p.loc)).toEqual([
      ['body', 'transitions', 0, 'from'],
      ['body', 'transitions', 0, 'to', 1],
    ]);
    expect(problems(() => setTransitions(base(), { entity_type: 'Nope', transitions: [] })).map((p) => p.loc)).toEqual([['body', 'entity_type']]);
  });
});

describe('task templates', () => {
  it('set: replaces them all; codes listed twice, unknown types and steps are 422', () => {
    const edit = setTaskTemplates(base(), { templates: [{ code: 't', name: 'T', entity_type: 'Shot', tasks: [{ name: 'Comp it', step: 'comp' }] }] });
    expect(edit.result).toEqual({
      templates: [{ code: 't', name: 'T', entity_type: 'Shot', tasks: [{ name: 'Comp it', step: 'comp', estimate_minutes: null }] }],
    });
    expect(edit.changes[0]).toMatchObject({ kind: 'Schema.TaskTemplates', key: 'studio', action: 'update' });
    const found = problems(() =>
      setTaskTemplates(base(), {
        templates: [
          { code: 't', name: 'T', entity_type: 'Shot', tasks: [] },
          { code: 't', name: 'T', entity_type: 'Nope', tasks: [{ name: 'x', step: 'nope' }] },
        ],
      }),
    );
    expect(found.map((p) => p.loc)).toEqual([
      ['body', 'templates', 1, 'code'],
      ['body', 'templates', 1, 'entity_type'],
      ['body', 'templates', 1, 'tasks', 0, 'step'],
    ]);
  });
});
