/** Steps: create, reorder, update, delete, rename. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { duplicate, notFound, Problems } from '../schema.errors.js';
import type { SchemaDoc, SchemaUsage } from '../schema.types.js';
import { asChanges, clone, deleted, renamed, renameListed, typesExist, withoutListed, type Body, type Edit, type RenameAnswer } from './edit.js';

export function createStep(doc: SchemaDoc, body: Body<typeof B.StepBody>): Edit {
  const p = new Problems();
  typesExist(p, doc, body.entity_types, ['entity_types']);
  p.throwIfAny();
  if (doc.steps.some((s) => s.code === body.code)) throw duplicate('step', body.code);
  const def = { code: body.code, name: body.name, color: body.color ?? null, entity_types: [...new Set(body.entity_types ?? [])] };
  const next = clone(doc);
  next.steps.push(def);
  return { doc: next, changes: [{ kind: 'Schema.Step', key: def.code, action: 'create', changes: asChanges(def) }], result: def };
}

export function reorderSteps(doc: SchemaDoc, body: Body<typeof B.StepReorder>): Edit {
  const current = doc.steps.map((s) => s.code);
  const given = new Set(body.codes);
  if (given.size !== body.codes.length || body.codes.length !== current.length || current.some((c) => !given.has(c))) {
    const p = new Problems();
    p.add(['codes'], `must list every step code exactly once: ${current.join(', ') || '(no steps)'}`);
    p.throwIfAny();
  }
  const next = clone(doc);
  next.steps = body.codes.map((c) => next.steps.find((s) => s.code === c)!);
  return { doc: next, changes: [{ kind: 'Schema.Step', key: 'order', action: 'update', changes: { order: body.codes } }], result: { items: next.steps } };
}

export function updateStep(doc: SchemaDoc, code: string, body: Body<typeof B.StepPatch>): Edit {
  if (!doc.steps.some((s) => s.code === code)) throw notFound('step', code);
  const p = new Problems();
  typesExist(p, doc, body.entity_types, ['entity_types']);
  p.throwIfAny();
  const next = clone(doc);
  const s = next.steps.find((x) => x.code === code)!;
  if (body.name !== undefined) s.name = body.name;
  if (body.color !== undefined) s.color = body.color;
  if (body.entity_types !== undefined) s.entity_types = [...new Set(body.entity_types)];
  return { doc: next, changes: [{ kind: 'Schema.Step', key: code, action: 'update', changes: asChanges(s) }], result: s };
}

export function deleteStep(doc: SchemaDoc, code: string, usage: SchemaUsage): Edit {
  const next = withoutListed(doc, 'steps', 'step', code, usage.steps[code] ?? 0);
  for (const w of next.workflows) for (const s of w.schemas) s.steps = s.steps.filter((x) => x !== code);
  for (const t of next.task_templates) t.tasks = t.tasks.filter((x) => x.step !== code);
  return deleted(next, 'Schema.Step', code);
}

export function renameStep(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRename>): Edit<RenameAnswer> {
  const to = body.new_code;
  const next = renameListed(doc, 'steps', 'step', code, to);
  const swap = (x: string) => (x === code ? to : x);
  for (const w of next.workflows) for (const s of w.schemas) s.steps = s.steps.map(swap);
  for (const t of next.task_templates) for (const task of t.tasks) task.step = swap(task.step);
  return renamed(next, { kind: 'step', entityType: '', field: '', from: code, to });
}
