/** Workflows, the studio-default transitions and the task templates. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { duplicate, notFound, Problems } from '../schema.errors.js';
import { OPTION_TYPES, type FieldDef, type SchemaDoc } from '../schema.types.js';
import { asChanges, clone, deleted, stepsExist, uniqueCodes, type Body, type Edit } from './edit.js';

export function createWorkflow(doc: SchemaDoc, body: Body<typeof B.WorkflowBody>): Edit {
  const p = new Problems();
  let enumField: FieldDef | undefined;
  if (body.entity_type !== undefined) {
    const t = doc.entity_types.find((e) => e.code === body.entity_type);
    if (!t) p.add(['entity_type'], `entity type ${body.entity_type} does not exist`);
    else if (body.field !== undefined) {
      enumField = t.fields.find((f) => f.code === body.field);
      if (!enumField || !OPTION_TYPES.has(enumField.type)) p.add(['field'], `${body.field} is not an enum field of ${body.entity_type}`);
    }
  } else if (body.field !== undefined) p.add(['field'], 'a field needs an entity_type');
  (body.schemas ?? []).forEach((s, i) => {
    if (enumField && !enumField.options.some((o) => o.code === s.option)) p.add(['schemas', i, 'option'], `option ${s.option} does not exist`);
    stepsExist(p, doc, s.steps, ['schemas', i, 'steps']);
  });
  p.throwIfAny();
  if (doc.workflows.some((w) => w.code === body.code)) throw duplicate('workflow', body.code);
  const def = {
    code: body.code,
    name: body.name ?? body.code,
    entity_type: body.entity_type ?? null,
    field: body.field ?? null,
    schemas: (body.schemas ?? []).map((s) => ({ option: s.option, steps: [...s.steps] })),
  };
  const next = clone(doc);
  next.workflows.push(def);
  return { doc: next, changes: [{ kind: 'Schema.Workflow', key: def.code, action: 'create', changes: asChanges(def) }], result: def };
}

export function deleteWorkflow(doc: SchemaDoc, code: string): Edit {
  if (!doc.workflows.some((w) => w.code === code)) throw notFound('workflow', code);
  const next = clone(doc);
  next.workflows = next.workflows.filter((w) => w.code !== code);
  return deleted(next, 'Schema.Workflow', code);
}

/** Statuses that apply to `type` (scoped to it or to every type). */
const statusFor = (doc: SchemaDoc, type: string, code: string) =>
  doc.statuses.some((s) => s.code === code && (s.entity_types.length === 0 || s.entity_types.includes(type)));

export function setTransitions(doc: SchemaDoc, body: Body<typeof B.ObjectTransitionsBody>): Edit {
  const p = new Problems();
  if (!doc.entity_types.some((e) => e.code === body.entity_type)) p.add(['entity_type'], `entity type ${body.entity_type} does not exist`);
  else {
    body.transitions.forEach((t, i) => {
      if (!statusFor(doc, body.entity_type, t.from)) p.add(['transitions', i, 'from'], `status ${t.from} is not a status of ${body.entity_type}`);
      t.to.forEach((c, j) => {
        if (!statusFor(doc, body.entity_type, c)) p.add(['transitions', i, 'to', j], `status ${c} is not a status of ${body.entity_type}`);
      });
    });
  }
  p.throwIfAny();
  const next = clone(doc);
  const list = body.transitions.map((t) => ({ from: t.from, to: [...new Set(t.to)], roles: [...new Set(t.roles ?? [])] }));
  if (list.length) next.transitions[body.entity_type] = list;
  else delete next.transitions[body.entity_type];
  const result = { entity_type: body.entity_type, transitions: list };
  return { doc: next, changes: [{ kind: 'Schema.Transitions', key: body.entity_type, action: 'update', changes: result }], result };
}

export function setTaskTemplates(doc: SchemaDoc, body: Body<typeof B.TaskTemplatesBody>): Edit {
  const p = new Problems();
  uniqueCodes(p, body.templates, ['templates']);
  body.templates.forEach((t, i) => {
    if (!doc.entity_types.some((e) => e.code === t.entity_type)) p.add(['templates', i, 'entity_type'], `entity type ${t.entity_type} does not exist`);
    t.tasks.forEach((task, j) => {
      if (!doc.steps.some((s) => s.code === task.step)) p.add(['templates', i, 'tasks', j, 'step'], `step ${task.step} does not exist`);
    });
  });
  p.throwIfAny();
  const next = clone(doc);
  next.task_templates = body.templates.map((t) => ({
    code: t.code,
    name: t.name,
    entity_type: t.entity_type,
    tasks: t.tasks.map((x) => ({ name: x.name, step: x.step, estimate_minutes: x.estimate_minutes ?? null })),
  }));
  const result = { templates: next.task_templates };
  return { doc: next, changes: [{ kind: 'Schema.TaskTemplates', key: 'studio', action: 'update', changes: result }], result };
}
