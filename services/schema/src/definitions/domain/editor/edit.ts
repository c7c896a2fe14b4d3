/**
 * What every editor function returns, and the pieces they share: the change events, the rename
 * plan and answer, lookups that 404, and the checks several kinds of definition make.
 */
import type { z } from 'zod';
import { duplicate, inUse, notFound, Problems } from '../schema.errors.js';
import { CODE, type EntityTypeDef, type FieldDef, type SchemaDoc } from '../schema.types.js';

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

/**
 * A body an editor function takes: its schema's input shape, so that an editor fills in what a
 * default would (a parsed body, which has the defaults, is one too).
 */
export type Body<S extends z.ZodType> = z.input<S>;

export const clone = (doc: SchemaDoc): SchemaDoc => structuredClone(doc);

/** The entity type `code`, or 404. */
export function entity(doc: SchemaDoc, code: string): EntityTypeDef {
  const t = doc.entity_types.find((e) => e.code === code);
  if (!t) throw notFound('entity type', code);
  return t;
}

/** The field `code` of `t`, or 404. */
export function field(t: EntityTypeDef, code: string): FieldDef {
  const f = t.fields.find((x) => x.code === code);
  if (!f) throw notFound('field', `${t.code}.${code}`);
  return f;
}

/** A problem for every item whose `key` repeats an earlier one. */
export function uniqueCodes(p: Problems, items: readonly object[], loc: (string | number)[], key = 'code'): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const c = (item as Record<string, unknown>)[key] as string;
    if (seen.has(c)) p.add([...loc, i, key], `${c} is listed twice`);
    seen.add(c);
  });
}

/** A problem for every type of `types` that does not exist. */
export function typesExist(p: Problems, doc: SchemaDoc, types: readonly string[] | undefined, loc: (string | number)[]): void {
  types?.forEach((c, i) => {
    if (!doc.entity_types.some((e) => e.code === c)) p.add([...loc, i], `entity type ${c} does not exist`);
  });
}

/** A problem for every step of `steps` that does not exist. */
export function stepsExist(p: Problems, doc: SchemaDoc, steps: readonly string[], loc: (string | number)[]): void {
  steps.forEach((c, i) => {
    if (!doc.steps.some((s) => s.code === c)) p.add([...loc, i], `step ${c} does not exist`);
  });
}

/** A problem when a rename's new code does not match `pattern`. */
export function newCode(p: Problems, value: string, pattern: RegExp): void {
  if (!pattern.test(value)) p.add(['new_code'], `must match ${pattern.source}`, 'string_pattern_mismatch');
}

/** The event of a field change. */
export function fieldChange(t: string, f: FieldDef, action: DefinitionChange['action']): DefinitionChange {
  return { kind: 'Schema.Field', key: `${t}.${f.code}`, action, changes: { entity_type: t, ...f } };
}

/** A definition as its event's changes. */
export const asChanges = (v: object): Record<string, unknown> => ({ ...v });

/** The answer of a rename: what changed and how many records the cascade rewrote. */
export interface RenameAnswer {
  kind: RenameKind;
  entity_type: string | null;
  field: string | null;
  old_code: string;
  new_code: string;
  rewritten: number;
}

/** The edit of a rename: its plan and its answer (the cascade count comes later). */
export function renamed(doc: SchemaDoc, plan: RenamePlan): Edit<RenameAnswer> {
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

/** The edit of a delete: one `delete` event of `kind` and `{code, deleted: true}`. */
export function deleted(doc: SchemaDoc, kind: SchemaEventKind, code: string): Edit<{ code: string; deleted: true }> {
  return { doc, changes: [{ kind, key: code, action: 'delete', changes: { code } }], result: { code, deleted: true } };
}

/** The definitions kept as a list of codes. */
type Listed = 'statuses' | 'steps' | 'priorities';

const listOf = (doc: SchemaDoc, list: Listed): { code: string }[] => doc[list];

/** The next document without the `list` definition `code`: 404 when there is none, 409 `code_in_use` while `used` records hold it. */
export function withoutListed(doc: SchemaDoc, list: Listed, what: string, code: string, used: number): SchemaDoc {
  if (!listOf(doc, list).some((s) => s.code === code)) throw notFound(what, code);
  if (used > 0) throw inUse(what, code, used);
  const next = clone(doc);
  (next as Record<Listed, { code: string }[]>)[list] = listOf(next, list).filter((s) => s.code !== code);
  return next;
}

/**
 * The next document with the `list` definition `code` renamed to `to`: 404 when there is none, 422
 * for a malformed code, 409 `duplicate_code` when `to` exists. The caller renames the references.
 */
export function renameListed(doc: SchemaDoc, list: Listed, what: string, code: string, to: string): SchemaDoc {
  if (!listOf(doc, list).some((s) => s.code === code)) throw notFound(what, code);
  const p = new Problems();
  newCode(p, to, CODE);
  p.throwIfAny();
  if (listOf(doc, list).some((s) => s.code === to)) throw duplicate(what, to);
  const next = clone(doc);
  listOf(next, list).find((x) => x.code === code)!.code = to;
  return next;
}
