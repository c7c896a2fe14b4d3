/**
 * The rules of every definition change, as pure functions from one {@link SchemaDoc} to the
 * next (docs/architecture.md, "The schema service"). Each returns the new document, the
 * definition event(s) to publish and the answer; renames also return the cascade to run over
 * the records. Nothing here does I/O: usage counts come in as arguments.
 */
import type { z } from 'zod';
import type * as B from './bodies.js';
import { BUILTIN_TYPES } from './builtins.js';
import { builtin, duplicate, inUse, notFound, Problems } from './schema.errors.js';
import {
  CODE,
  ENTITY_CODE,
  LINK_TYPES,
  OPTION_TYPES,
  RECORD_COLUMNS,
  type ApplicationDef,
  type EntityTypeDef,
  type FieldDef,
  type OptionDef,
  type SchemaDoc,
  type SchemaUsage,
  type StatusDef,
  type ToolDef,
} from './schema.types.js';

/** The event kinds of schema changes (`entity_type` of the event). */
export type SchemaEventKind =
  | 'Schema.EntityType'
  | 'Schema.Field'
  | 'Schema.Status'
  | 'Schema.Step'
  | 'Schema.Priority'
  | 'Schema.Workflow'
  | 'Schema.Transitions'
  | 'Schema.TaskTemplates'
  | 'Schema.Branding'
  | 'Schema.Applications'
  | 'Schema.Tools';

/** One definition change, before it becomes a stream event. */
export interface DefinitionChange {
  kind: SchemaEventKind;
  /** Identifies the definition (`Shot`, `Shot.cut_in`, `ip`, `studio`). */
  key: string;
  action: 'create' | 'update' | 'delete';
  changes: Record<string, unknown>;
}

export const RENAME_KINDS = ['entity_type', 'status', 'step', 'priority', 'option'] as const;
export type RenameKind = (typeof RENAME_KINDS)[number];

/** A code rename to cascade over the records (a rename journal entry). */
export interface RenamePlan {
  kind: RenameKind;
  /** The type of a renamed option (and the renamed type itself for kind entity_type). */
  entityType: string;
  /** The enum field of a renamed option. */
  field: string;
  from: string;
  to: string;
}

/** The outcome of one rule. */
export interface Edit<R = unknown> {
  doc: SchemaDoc;
  changes: DefinitionChange[];
  result: R;
  rename?: RenamePlan;
}

type Body<S extends z.ZodType> = z.infer<S>;

const clone = (doc: SchemaDoc): SchemaDoc => structuredClone(doc);

function entity(doc: SchemaDoc, code: string): EntityTypeDef {
  const t = doc.entity_types.find((e) => e.code === code);
  if (!t) throw notFound('entity type', code);
  return t;
}

function field(t: EntityTypeDef, code: string): FieldDef {
  const f = t.fields.find((x) => x.code === code);
  if (!f) throw notFound('field', `${t.code}.${code}`);
  return f;
}

function uniqueCodes(p: Problems, items: readonly object[], loc: (string | number)[], key = 'code'): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const c = (item as Record<string, unknown>)[key] as string;
    if (seen.has(c)) p.add([...loc, i, key], `${c} is listed twice`);
    seen.add(c);
  });
}

function typesExist(p: Problems, doc: SchemaDoc, types: readonly string[] | undefined, loc: (string | number)[]): void {
  types?.forEach((c, i) => {
    if (!doc.entity_types.some((e) => e.code === c)) p.add([...loc, i], `entity type ${c} does not exist`);
  });
}

function stepsExist(p: Problems, doc: SchemaDoc, steps: readonly string[], loc: (string | number)[]): void {
  steps.forEach((c, i) => {
    if (!doc.steps.some((s) => s.code === c)) p.add([...loc, i], `step ${c} does not exist`);
  });
}

function newCode(p: Problems, value: string, pattern: RegExp): void {
  if (!pattern.test(value)) p.add(['new_code'], `must match ${pattern.source}`, 'string_pattern_mismatch');
}

const options = (list: Body<typeof B.FieldBody>['options'], keepBuiltin: OptionDef[] = []): OptionDef[] =>
  (list ?? []).map((o) => ({ code: o.code, label: o.label, color: o.color ?? null, builtin: keepBuiltin.some((k) => k.code === o.code && k.builtin) }));

/** A default must be a value of the field's type (links have none). */
function checkDefault(p: Problems, f: Pick<FieldDef, 'type' | 'options'>, value: unknown): void {
  if (value === null || value === undefined) return;
  const codes = new Set(f.options.map((o) => o.code));
  const ok = (() => {
    switch (f.type) {
      case 'text':
      case 'url':
      case 'color':
      case 'date':
      case 'datetime':
        return typeof value === 'string';
      case 'integer':
        return Number.isInteger(value);
      case 'float':
        return typeof value === 'number' && Number.isFinite(value);
      case 'duration':
        return (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string';
      case 'boolean':
        return typeof value === 'boolean';
      case 'enum':
        return typeof value === 'string' && codes.has(value);
      case 'multi_enum':
        return Array.isArray(value) && value.every((v) => typeof v === 'string' && codes.has(v));
      case 'json':
        return true;
      case 'link':
      case 'multi_link':
        return false;
    }
  })();
  if (!ok) p.add(['default'], `not a valid default for a ${f.type} field`);
}

function fieldChange(t: string, f: FieldDef, action: DefinitionChange['action']): DefinitionChange {
  return { kind: 'Schema.Field', key: `${t}.${f.code}`, action, changes: { entity_type: t, ...f } };
}

/** A definition as its event's changes. */
const asChanges = (v: object): Record<string, unknown> => ({ ...v });

// ─── entity types ────────────────────────────────────────────────────────────────────────

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
  return { doc: next, changes: [{ kind: 'Schema.EntityType', key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

export function renameEntityTypeCode(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRenameBody>): Edit<RenameAnswer> {
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

// ─── fields ──────────────────────────────────────────────────────────────────────────────

function checkFieldShape(
  p: Problems,
  doc: SchemaDoc,
  f: Pick<FieldDef, 'type' | 'options'>,
  body: { options?: unknown[]; link_types?: string[]; default?: unknown },
): void {
  if (body.options !== undefined && !OPTION_TYPES.has(f.type)) p.add(['options'], `a ${f.type} field has no options`);
  if (body.link_types !== undefined && !LINK_TYPES.has(f.type)) p.add(['link_types'], `a ${f.type} field has no link types`);
  typesExist(p, doc, body.link_types, ['link_types']);
  if (body.options) uniqueCodes(p, body.options as object[], ['options']);
  if (body.default !== undefined) checkDefault(p, f, body.default);
}

export function createField(doc: SchemaDoc, typeCode: string, body: Body<typeof B.FieldBody>): Edit<FieldDef> {
  const t = entity(doc, typeCode);
  const p = new Problems();
  if (RECORD_COLUMNS.has(body.code)) p.add(['code'], `${body.code} is a column of every record, not a field`);
  const def: FieldDef = {
    code: body.code,
    name: body.name,
    type: body.type,
    description: body.description ?? '',
    options: options(body.options),
    link_types: body.link_types ?? [],
    required: body.required ?? false,
    default: body.default ?? null,
    builtin: false,
  };
  checkFieldShape(p, doc, def, body);
  p.throwIfAny();
  if (t.fields.some((f) => f.code === body.code)) throw duplicate('field', `${typeCode}.${body.code}`);
  const next = clone(doc);
  entity(next, typeCode).fields.push(def);
  return { doc: next, changes: [fieldChange(typeCode, def, 'create')], result: def };
}

export function updateField(doc: SchemaDoc, typeCode: string, fieldCode: string, body: Body<typeof B.FieldPatch>, usage: SchemaUsage): Edit<FieldDef> {
  const t = entity(doc, typeCode);
  const f = field(t, fieldCode);
  const p = new Problems();
  const nextOptions = body.options === undefined ? f.options : options(body.options, f.options);
  checkFieldShape(p, doc, { type: f.type, options: nextOptions }, body);
  // A new options list must still hold the current default.
  if (body.options !== undefined && body.default === undefined && f.default !== null) {
    const q = new Problems();
    checkDefault(q, { type: f.type, options: nextOptions }, f.default);
    try {
      q.throwIfAny();
    } catch {
      p.add(['options'], 'the field default is not among the new options');
    }
  }
  p.throwIfAny();
  if (body.options !== undefined) {
    const kept = new Set(nextOptions.map((o) => o.code));
    for (const dropped of f.options.filter((o) => !kept.has(o.code))) {
      if (dropped.builtin) throw builtin('option', `${typeCode}.${fieldCode}.${dropped.code}`);
      const n = usage.options?.[`${typeCode}.${fieldCode}.${dropped.code}`] ?? (usage.options ? 0 : (usage.fields[`${typeCode}.${fieldCode}`] ?? 0));
      if (n > 0) throw inUse('option', `${typeCode}.${fieldCode}.${dropped.code}`, n);
    }
  }
  const next = clone(doc);
  const nf = field(entity(next, typeCode), fieldCode);
  if (body.name !== undefined) nf.name = body.name;
  if (body.description !== undefined) nf.description = body.description;
  if (body.required !== undefined) nf.required = body.required;
  if (body.default !== undefined) nf.default = body.default;
  if (body.options !== undefined) {
    nf.options = nextOptions;
    const kept = new Set(nextOptions.map((o) => o.code));
    for (const w of next.workflows) {
      if (w.entity_type === typeCode && w.field === fieldCode) w.schemas = w.schemas.filter((s) => kept.has(s.option));
    }
  }
  return { doc: next, changes: [fieldChange(typeCode, nf, 'update')], result: nf };
}

export function deleteField(doc: SchemaDoc, typeCode: string, fieldCode: string, usage: SchemaUsage): Edit<{ code: string; deleted: true }> {
  const f = field(entity(doc, typeCode), fieldCode);
  if (f.builtin) throw builtin('field', `${typeCode}.${fieldCode}`);
  const n = usage.fields[`${typeCode}.${fieldCode}`] ?? 0;
  if (n > 0) throw inUse('field', `${typeCode}.${fieldCode}`, n);
  const next = clone(doc);
  const t = entity(next, typeCode);
  t.fields = t.fields.filter((x) => x.code !== fieldCode);
  next.workflows = next.workflows.filter((w) => !(w.entity_type === typeCode && w.field === fieldCode));
  return {
    doc: next,
    changes: [{ kind: 'Schema.Field', key: `${typeCode}.${fieldCode}`, action: 'delete', changes: { entity_type: typeCode, code: fieldCode } }],
    result: { code: fieldCode, deleted: true },
  };
}

export function renameOption(doc: SchemaDoc, typeCode: string, fieldCode: string, body: Body<typeof B.OptionRenameBody>): Edit<RenameAnswer> {
  const f = field(entity(doc, typeCode), fieldCode);
  if (!OPTION_TYPES.has(f.type)) {
    const p = new Problems();
    p.add([], `${typeCode}.${fieldCode} is a ${f.type} field: it has no options`);
    p.throwIfAny();
  }
  const o = f.options.find((x) => x.code === body.from);
  if (!o) throw notFound('option', `${typeCode}.${fieldCode}.${body.from}`);
  if (o.builtin) throw builtin('option', `${typeCode}.${fieldCode}.${body.from}`);
  if (f.options.some((x) => x.code === body.to)) throw duplicate('option', `${typeCode}.${fieldCode}.${body.to}`);
  const next = clone(doc);
  const nf = field(entity(next, typeCode), fieldCode);
  nf.options.find((x) => x.code === body.from)!.code = body.to;
  if (nf.default === body.from) nf.default = body.to;
  else if (Array.isArray(nf.default)) nf.default = nf.default.map((v) => (v === body.from ? body.to : v));
  for (const w of next.workflows) {
    if (w.entity_type === typeCode && w.field === fieldCode) for (const s of w.schemas) if (s.option === body.from) s.option = body.to;
  }
  return renamed(next, { kind: 'option', entityType: typeCode, field: fieldCode, from: body.from, to: body.to });
}

// ─── statuses ────────────────────────────────────────────────────────────────────────────

export function createStatus(doc: SchemaDoc, body: Body<typeof B.StatusBody>): Edit<StatusDef> {
  const p = new Problems();
  typesExist(p, doc, body.entity_types, ['entity_types']);
  p.throwIfAny();
  if (doc.statuses.some((s) => s.code === body.code)) throw duplicate('status', body.code);
  const def: StatusDef = {
    code: body.code,
    name: body.name,
    color: body.color ?? null,
    icon: body.icon ?? null,
    state: body.state,
    entity_types: [...new Set(body.entity_types ?? [])],
  };
  const next = clone(doc);
  next.statuses.push(def);
  return { doc: next, changes: [{ kind: 'Schema.Status', key: def.code, action: 'create', changes: asChanges(def) }], result: def };
}

export function updateStatus(doc: SchemaDoc, code: string, body: Body<typeof B.StatusPatch>): Edit<StatusDef> {
  if (!doc.statuses.some((s) => s.code === code)) throw notFound('status', code);
  const p = new Problems();
  typesExist(p, doc, body.entity_types, ['entity_types']);
  p.throwIfAny();
  const next = clone(doc);
  const s = next.statuses.find((x) => x.code === code)!;
  if (body.name !== undefined) s.name = body.name;
  if (body.color !== undefined) s.color = body.color;
  if (body.icon !== undefined) s.icon = body.icon;
  if (body.state !== undefined) s.state = body.state;
  if (body.entity_types !== undefined) s.entity_types = [...new Set(body.entity_types)];
  return { doc: next, changes: [{ kind: 'Schema.Status', key: code, action: 'update', changes: asChanges(s) }], result: s };
}

/** Removes a status from the transitions of `types` (every type when undefined). */
function dropStatusTransitions(doc: SchemaDoc, code: string, types?: string[]): void {
  for (const [type, list] of Object.entries(doc.transitions)) {
    if (types && !types.includes(type)) continue;
    doc.transitions[type] = list.filter((t) => t.from !== code).map((t) => ({ ...t, to: t.to.filter((x) => x !== code) }));
  }
}

/**
 * Deletes a status, or with `entityCode` takes that type out of its scope only (a status
 * scoped to every type becomes scoped to every other existing type); a scope left empty
 * deletes the status.
 */
export function deleteStatus(
  doc: SchemaDoc,
  code: string,
  entityCode: string | undefined,
  usage: SchemaUsage,
): Edit<StatusDef | { code: string; deleted: true }> {
  const s = doc.statuses.find((x) => x.code === code);
  if (!s) throw notFound('status', code);
  if (entityCode) {
    entity(doc, entityCode);
    const scope = s.entity_types.length ? s.entity_types : doc.entity_types.map((e) => e.code);
    if (!scope.includes(entityCode)) throw notFound('status', `${code} for ${entityCode}`);
    const narrowed = scope.filter((x) => x !== entityCode);
    if (narrowed.length > 0) {
      const n = usage.status_types?.[`${entityCode}.${code}`] ?? 0;
      if (n > 0) throw inUse('status', `${code} (${entityCode})`, n);
      const next = clone(doc);
      const ns = next.statuses.find((x) => x.code === code)!;
      ns.entity_types = narrowed;
      dropStatusTransitions(next, code, [entityCode]);
      return { doc: next, changes: [{ kind: 'Schema.Status', key: code, action: 'update', changes: asChanges(ns) }], result: ns };
    }
  }
  const n = usage.statuses[code] ?? 0;
  if (n > 0) throw inUse('status', code, n);
  const next = clone(doc);
  next.statuses = next.statuses.filter((x) => x.code !== code);
  dropStatusTransitions(next, code);
  return { doc: next, changes: [{ kind: 'Schema.Status', key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

export function renameStatus(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRenameBody>): Edit<RenameAnswer> {
  if (!doc.statuses.some((s) => s.code === code)) throw notFound('status', code);
  const p = new Problems();
  newCode(p, body.new_code, CODE);
  p.throwIfAny();
  const to = body.new_code;
  if (doc.statuses.some((s) => s.code === to)) throw duplicate('status', to);
  const next = clone(doc);
  next.statuses.find((x) => x.code === code)!.code = to;
  const swap = (x: string) => (x === code ? to : x);
  for (const list of Object.values(next.transitions))
    for (const t of list) {
      t.from = swap(t.from);
      t.to = t.to.map(swap);
    }
  return renamed(next, { kind: 'status', entityType: '', field: '', from: code, to });
}

// ─── steps ───────────────────────────────────────────────────────────────────────────────

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
  if (!doc.steps.some((s) => s.code === code)) throw notFound('step', code);
  const n = usage.steps[code] ?? 0;
  if (n > 0) throw inUse('step', code, n);
  const next = clone(doc);
  next.steps = next.steps.filter((s) => s.code !== code);
  for (const w of next.workflows) for (const s of w.schemas) s.steps = s.steps.filter((x) => x !== code);
  for (const t of next.task_templates) t.tasks = t.tasks.filter((x) => x.step !== code);
  return { doc: next, changes: [{ kind: 'Schema.Step', key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

export function renameStep(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRenameBody>): Edit<RenameAnswer> {
  if (!doc.steps.some((s) => s.code === code)) throw notFound('step', code);
  const p = new Problems();
  newCode(p, body.new_code, CODE);
  p.throwIfAny();
  const to = body.new_code;
  if (doc.steps.some((s) => s.code === to)) throw duplicate('step', to);
  const next = clone(doc);
  next.steps.find((x) => x.code === code)!.code = to;
  const swap = (x: string) => (x === code ? to : x);
  for (const w of next.workflows) for (const s of w.schemas) s.steps = s.steps.map(swap);
  for (const t of next.task_templates) for (const task of t.tasks) task.step = swap(task.step);
  return renamed(next, { kind: 'step', entityType: '', field: '', from: code, to });
}

// ─── priorities ──────────────────────────────────────────────────────────────────────────

const byRank = (doc: SchemaDoc) => doc.priorities.sort((a, b) => a.rank - b.rank || a.code.localeCompare(b.code));

export function createPriority(doc: SchemaDoc, body: Body<typeof B.PriorityBody>): Edit {
  if (doc.priorities.some((s) => s.code === body.code)) throw duplicate('priority', body.code);
  const def = { code: body.code, name: body.name, color: body.color ?? null, rank: body.rank };
  const next = clone(doc);
  next.priorities.push(def);
  byRank(next);
  return { doc: next, changes: [{ kind: 'Schema.Priority', key: def.code, action: 'create', changes: asChanges(def) }], result: def };
}

export function updatePriority(doc: SchemaDoc, code: string, body: Body<typeof B.PriorityPatch>): Edit {
  if (!doc.priorities.some((s) => s.code === code)) throw notFound('priority', code);
  const next = clone(doc);
  const s = next.priorities.find((x) => x.code === code)!;
  if (body.name !== undefined) s.name = body.name;
  if (body.color !== undefined) s.color = body.color;
  if (body.rank !== undefined) s.rank = body.rank;
  byRank(next);
  return { doc: next, changes: [{ kind: 'Schema.Priority', key: code, action: 'update', changes: asChanges(s) }], result: s };
}

export function deletePriority(doc: SchemaDoc, code: string, usage: SchemaUsage): Edit {
  if (!doc.priorities.some((s) => s.code === code)) throw notFound('priority', code);
  const n = usage.priorities[code] ?? 0;
  if (n > 0) throw inUse('priority', code, n);
  const next = clone(doc);
  next.priorities = next.priorities.filter((s) => s.code !== code);
  return { doc: next, changes: [{ kind: 'Schema.Priority', key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

export function renamePriority(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRenameBody>): Edit<RenameAnswer> {
  if (!doc.priorities.some((s) => s.code === code)) throw notFound('priority', code);
  const p = new Problems();
  newCode(p, body.new_code, CODE);
  p.throwIfAny();
  const to = body.new_code;
  if (doc.priorities.some((s) => s.code === to)) throw duplicate('priority', to);
  const next = clone(doc);
  next.priorities.find((x) => x.code === code)!.code = to;
  return renamed(next, { kind: 'priority', entityType: '', field: '', from: code, to });
}

// ─── workflows, transitions, task templates ──────────────────────────────────────────────

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
  return { doc: next, changes: [{ kind: 'Schema.Workflow', key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

/** Statuses that apply to `type` (scoped to it or to every type). */
const statusFor = (doc: SchemaDoc, type: string, code: string) =>
  doc.statuses.some((s) => s.code === code && (s.entity_types.length === 0 || s.entity_types.includes(type)));

export function setTransitions(doc: SchemaDoc, body: Body<typeof B.TransitionsBody>): Edit {
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

// ─── branding and catalogs ───────────────────────────────────────────────────────────────

export function setBranding(doc: SchemaDoc, body: Body<typeof B.BrandingBody>): Edit {
  const next = clone(doc);
  next.branding = {
    studio_name: body.studio_name ?? null,
    logo_media_key: body.logo_media_key ?? null,
    primary_color: body.primary_color ?? null,
    accent_color: body.accent_color ?? null,
  };
  return { doc: next, changes: [{ kind: 'Schema.Branding', key: 'studio', action: 'update', changes: asChanges(next.branding) }], result: next.branding };
}

export function setApplications(doc: SchemaDoc, body: Body<typeof B.ApplicationsBody>): Edit {
  const p = new Problems();
  uniqueCodes(p, body.applications, ['applications']);
  p.throwIfAny();
  const next = clone(doc);
  next.applications = body.applications.map((a): ApplicationDef => ({
    code: a.code,
    label: a.label,
    group: a.group ?? null,
    version: a.version ?? null,
    icon: a.icon ?? null,
    executables: a.executables ?? {},
    args: a.args ?? [],
    environment: a.environment ?? {},
  }));
  const result = { applications: next.applications };
  return { doc: next, changes: [{ kind: 'Schema.Applications', key: 'studio', action: 'update', changes: result }], result };
}

export function setTools(doc: SchemaDoc, body: Body<typeof B.ToolsBody>): Edit {
  const p = new Problems();
  uniqueCodes(p, body.tools, ['tools'], 'tool');
  body.tools.forEach((t, i) => uniqueCodes(p, t.variants, ['tools', i, 'variants'], 'version'));
  p.throwIfAny();
  const next = clone(doc);
  next.tools = body.tools.map((t): ToolDef => ({
    tool: t.tool,
    label: t.label,
    icon: t.icon ?? null,
    variants: t.variants.map((v) => ({ version: v.version, args: v.args ?? [], environment: v.environment ?? {} })),
  }));
  const result = { tools: next.tools };
  return { doc: next, changes: [{ kind: 'Schema.Tools', key: 'studio', action: 'update', changes: result }], result };
}

// ─── renames and seeding ─────────────────────────────────────────────────────────────────

/** The answer of a rename: what changed and how many records the cascade rewrote. */
export interface RenameAnswer {
  kind: RenameKind;
  entity_type: string | null;
  field: string | null;
  old_code: string;
  new_code: string;
  rewritten: number;
}

function renamed(doc: SchemaDoc, plan: RenamePlan): Edit<RenameAnswer> {
  // The event is published once the cascade has run (it carries the count): see SchemaService.
  return {
    doc,
    changes: [],
    rename: plan,
    result: {
      kind: plan.kind,
      entity_type: plan.entityType || null,
      field: plan.field || null,
      old_code: plan.from,
      new_code: plan.to,
      rewritten: 0,
    },
  };
}

/** The kind of event a rename of `kind` is reported as. */
export function renameEventKind(kind: RenameKind): SchemaEventKind {
  switch (kind) {
    case 'entity_type':
      return 'Schema.EntityType';
    case 'status':
      return 'Schema.Status';
    case 'step':
      return 'Schema.Step';
    case 'priority':
      return 'Schema.Priority';
    case 'option':
      return 'Schema.Field';
  }
}

/**
 * Adds every built-in type and built-in field the document lacks (a first start, or a
 * release that adds built-in fields); null when nothing is missing.
 */
export function seedBuiltins(doc: SchemaDoc): Edit<{ added: string[] }> | null {
  const next = clone(doc);
  const added: string[] = [];
  const changes: DefinitionChange[] = [];
  for (const b of BUILTIN_TYPES) {
    let t = next.entity_types.find((e) => e.code === b.code);
    if (!t) {
      // A new type is one event carrying its fields.
      t = structuredClone(b);
      next.entity_types.push(t);
      added.push(b.code);
      changes.push({ kind: 'Schema.EntityType', key: b.code, action: 'create', changes: asChanges(t) });
      continue;
    }
    for (const f of b.fields) {
      if (t.fields.some((x) => x.code === f.code)) continue;
      const nf = structuredClone(f);
      t.fields.push(nf);
      added.push(`${b.code}.${f.code}`);
      changes.push(fieldChange(b.code, nf, 'create'));
    }
  }
  if (!added.length) return null;
  return { doc: next, changes, result: { added } };
}
