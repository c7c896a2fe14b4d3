/** Entity types: create, rename (name and code), delete. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { builtin, duplicate, inUse, Problems } from '../schema.errors.js';
import { ENTITY_CODE, type EntityTypeDef, type SchemaDoc, type SchemaUsage } from '../schema.types.js';
import { asChanges, clone, deleted, entity, newCode, renamed, type Body, type Edit, type RenameAnswer } from './edit.js';

export function createEntityType(doc: SchemaDoc, body: Body<typeof B.EntityTypeBody>): Edit<EntityTypeDef> {
  if (doc.entity_types.some((e) => e.code === body.code)) throw duplicate('entity type', body.code);
  const next = clone(doc);
  const def: EntityTypeDef = {
    code: body.code,
    name: body.name,
    description: body.description ?? '',
    builtin: false,
    project_scoped: body.project_scoped ?? true,
    fields: [],
  };
  next.entity_types.push(def);
  return { doc: next, changes: [{ kind: 'Schema.EntityType', key: def.code, action: 'create', changes: asChanges(def) }], result: def };
}

export function renameEntityType(doc: SchemaDoc, code: string, body: Body<typeof B.RenameBody>): Edit<EntityTypeDef> {
  const next = clone(doc);
  const t = entity(next, code);
  if (t.builtin) throw builtin('entity type', code);
  t.name = body.name;
  return { doc: next, changes: [{ kind: 'Schema.EntityType', key: code, action: 'update', changes: { code, name: body.name } }], result: t };
}

/** Drops every reference to a type that no longer exists. */
function forgetType(doc: SchemaDoc, code: string): void {
  for (const t of doc.entity_types) for (const f of t.fields) f.link_types = f.link_types.filter((x) => x !== code);
  for (const s of doc.statuses) s.entity_types = s.entity_types.filter((x) => x !== code);
  for (const s of doc.steps) s.entity_types = s.entity_types.filter((x) => x !== code);
  delete doc.transitions[code];
  doc.task_templates = doc.task_templates.filter((x) => x.entity_type !== code);
  doc.workflows = doc.workflows.filter((w) => w.entity_type !== code);
}

export function deleteEntityType(doc: SchemaDoc, code: string, usage: SchemaUsage): Edit<{ code: string; deleted: true }> {
  const t = entity(doc, code);
  if (t.builtin) throw builtin('entity type', code);
  const n = usage.entity_types[code] ?? 0;
  if (n > 0) throw inUse('entity type', code, n);
  const next = clone(doc);
  next.entity_types = next.entity_types.filter((e) => e.code !== code);
  forgetType(next, code);
  return deleted(next, 'Schema.EntityType', code);
}

export function renameEntityTypeCode(doc: SchemaDoc, code: string, body: Body<typeof B.EntityCodeRename>): Edit<RenameAnswer> {
  const t = entity(doc, code);
  if (t.builtin) throw builtin('entity type', code);
  const p = new Problems();
  newCode(p, body.new_code, ENTITY_CODE);
  p.throwIfAny();
  const to = body.new_code;
  if (doc.entity_types.some((e) => e.code === to)) throw duplicate('entity type', to);
  const next = clone(doc);
  const swap = (x: string) => (x === code ? to : x);
  entity(next, code).code = to;
  for (const e of next.entity_types) for (const f of e.fields) f.link_types = f.link_types.map(swap);
  for (const s of next.statuses) s.entity_types = s.entity_types.map(swap);
  for (const s of next.steps) s.entity_types = s.entity_types.map(swap);
  if (next.transitions[code]) {
    next.transitions[to] = next.transitions[code]!;
    delete next.transitions[code];
  }
  for (const tt of next.task_templates) tt.entity_type = swap(tt.entity_type);
  for (const w of next.workflows) if (w.entity_type !== null) w.entity_type = swap(w.entity_type);
  return renamed(next, { kind: 'entity_type', entityType: code, field: '', from: code, to });
}
