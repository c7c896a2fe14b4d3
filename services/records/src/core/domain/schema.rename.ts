/**
 * A renamed code and how it is rewritten inside a Preset (a saved query: `target_type`, `filters`
 * in the query language of docs/api-notes.md, `fields`, `order`). The bulk rewrite of record
 * columns and data is SQL in store/rename.repository.ts; Presets are few and their filters nest,
 * so they are rewritten here, precisely: only where the code stands as a type, status, step,
 * priority or option value, never a text value that happens to be spelled the same.
 */
import type { DataObject } from '../../kernel/domain/record.types.js';

export const RENAME_KINDS = ['entity_type', 'status', 'step', 'priority', 'option'] as const;
export type RenameKind = (typeof RENAME_KINDS)[number];

export interface CodeRename {
  /** The schema service's rename journal entry; a cascade is applied once per id. */
  journalId: string;
  kind: RenameKind;
  /** option: the type whose field is renamed. */
  entityType: string;
  /** option: the enum or multi_enum field. */
  field: string;
  from: string;
  to: string;
}

/** Operators whose value is a link's type (docs/api-notes.md, query language). */
const TYPE_OPERATORS = new Set(['type_is', 'type_is_not']);

/** `value` with every string equal to `from` (alone or inside arrays) replaced by `to`. */
function swapValue(value: unknown, from: string, to: string): unknown {
  if (value === from) return to;
  if (Array.isArray(value)) return value.map((v) => swapValue(v, from, to));
  return value;
}

/** A link value (or array of them) with its `type` renamed. */
function swapLinkType(value: unknown, from: string, to: string): unknown {
  if (Array.isArray(value)) return value.map((v) => swapLinkType(v, from, to));
  if (value && typeof value === 'object' && (value as DataObject).type === from && 'id' in (value as DataObject)) {
    return { ...(value as DataObject), type: to };
  }
  return value;
}

/**
 * A path's segments `field.Type.field.Type.field`: the types sit at odd positions. `base` is the
 * type the path starts from; the type owning the last segment is returned with it.
 */
function pathParts(path: string, base: string): { segments: string[]; owner: string } {
  const segments = path.split('.');
  let owner = base;
  for (let i = 1; i < segments.length; i += 2) owner = segments[i]!;
  return { segments, owner };
}

function rewriteCondition(cond: unknown[], base: string, r: CodeRename): unknown[] {
  const [path, op, ...values] = cond;
  if (typeof path !== 'string') return cond;
  const { segments, owner } = pathParts(path, base);
  const last = segments[segments.length - 1];
  let newPath: string = path;
  let newValues = values;
  switch (r.kind) {
    case 'entity_type':
      newPath = segments.map((s, i) => (i % 2 === 1 && s === r.from ? r.to : s)).join('.');
      if (last === 'entity_type' || (typeof op === 'string' && TYPE_OPERATORS.has(op))) newValues = values.map((v) => swapValue(v, r.from, r.to));
      else newValues = values.map((v) => swapLinkType(v, r.from, r.to));
      break;
    case 'status':
    case 'step':
    case 'priority':
      if (last === r.kind) newValues = values.map((v) => swapValue(v, r.from, r.to));
      break;
    case 'option':
      if (last === r.field && owner === r.entityType) newValues = values.map((v) => swapValue(v, r.from, r.to));
      break;
  }
  return [newPath, op, ...newValues];
}

function rewriteFilter(filter: unknown, base: string, r: CodeRename): unknown {
  if (Array.isArray(filter)) {
    // A condition starts with its path (a string); a list of items holds arrays or groups.
    if (typeof filter[0] === 'string') return rewriteCondition(filter, base, r);
    return filter.map((item) => rewriteFilter(item, base, r));
  }
  if (filter && typeof filter === 'object') {
    const group = filter as DataObject;
    if (Array.isArray(group.filters)) return { ...group, filters: group.filters.map((item) => rewriteFilter(item, base, r)) };
  }
  return filter;
}

/** A field list or order list of a Preset with hop types renamed (`entity.Shot.code`). */
function rewritePaths(value: unknown, r: CodeRename): unknown {
  const path = (p: unknown) =>
    typeof p === 'string'
      ? p
          .split('.')
          .map((s, i) => (i % 2 === 1 && s === r.from ? r.to : s))
          .join('.')
      : p;
  if (!Array.isArray(value)) return value;
  return value.map((item) => {
    if (typeof item === 'string') return path(item);
    if (item && typeof item === 'object' && 'field' in item) return { ...(item as DataObject), field: path((item as DataObject).field) };
    return item;
  });
}

/** A project's `overrides` with a renamed step's keys in `applicationsByStep` / `toolsByStep` renamed. */
function rewriteOverrides(overrides: unknown, r: CodeRename): unknown {
  if (!overrides || typeof overrides !== 'object' || Array.isArray(overrides)) return overrides;
  const next: DataObject = { ...(overrides as DataObject) };
  for (const key of ['applicationsByStep', 'toolsByStep']) {
    const byStep = next[key];
    if (byStep && typeof byStep === 'object' && !Array.isArray(byStep) && r.from in byStep) {
      next[key] = Object.fromEntries(Object.entries(byStep).map(([step, v]) => [step === r.from ? r.to : step, v]));
    }
  }
  return next;
}

/**
 * The data of a Preset or Project with `r` applied beyond what the bulk SQL rewrites (a Preset's
 * target type, filters, fields and order; a Project's per-step overrides), or undefined when
 * nothing in it changes.
 */
export function rewriteSmallRecord(entityType: string, data: DataObject, r: CodeRename): DataObject | undefined {
  if (entityType === 'Preset') return rewritePresetData(data, r);
  if (entityType === 'Project' && r.kind === 'step' && data.overrides !== undefined) {
    const next = { ...data, overrides: rewriteOverrides(data.overrides, r) };
    return JSON.stringify(next) === JSON.stringify(data) ? undefined : next;
  }
  return undefined;
}

/** The Preset's data with `r` applied, or undefined when nothing in it changes. */
export function rewritePresetData(data: DataObject, r: CodeRename): DataObject | undefined {
  const base = typeof data.target_type === 'string' ? data.target_type : '';
  const next: DataObject = { ...data };
  if (data.filters !== undefined) next.filters = rewriteFilter(data.filters, base, r);
  if (r.kind === 'entity_type') {
    if (data.target_type === r.from) next.target_type = r.to;
    if (data.fields !== undefined) next.fields = rewritePaths(data.fields, r);
    if (data.order !== undefined) next.order = rewritePaths(data.order, r);
  }
  return JSON.stringify(next) === JSON.stringify(data) ? undefined : next;
}
