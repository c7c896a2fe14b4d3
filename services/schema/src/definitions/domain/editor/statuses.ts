/** Statuses: create, update, delete (or narrow their scope), rename. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { builtin, duplicate, inUse, notFound, Problems } from '../schema.errors.js';
import { builtinStatusType } from '../builtins.js';
import type { SchemaDoc, SchemaUsage, StatusDef } from '../schema.types.js';
import { asChanges, clone, deleted, entity, renamed, renameListed, typesExist, withoutListed, type Body, type Edit, type RenameAnswer } from './edit.js';

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
  // A built-in status keeps its type in its scope (an empty scope, every type, keeps it too).
  const owner = builtinStatusType(code);
  if (owner && body.entity_types !== undefined && body.entity_types.length > 0 && !body.entity_types.includes(owner)) {
    throw builtin('status', `${code} (${owner})`);
  }
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
  const owner = builtinStatusType(code);
  if (owner && (!entityCode || entityCode === owner)) throw builtin('status', `${code} (${owner})`);
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
  const next = withoutListed(doc, 'statuses', 'status', code, usage.statuses[code] ?? 0);
  dropStatusTransitions(next, code);
  return deleted(next, 'Schema.Status', code);
}

export function renameStatus(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRename>): Edit<RenameAnswer> {
  const to = body.new_code;
  if (builtinStatusType(code) && doc.statuses.some((s) => s.code === code)) throw builtin('status', code);
  const next = renameListed(doc, 'statuses', 'status', code, to);
  const swap = (x: string) => (x === code ? to : x);
  for (const list of Object.values(next.transitions))
    for (const t of list) {
      t.from = swap(t.from);
      t.to = t.to.map(swap);
    }
  return renamed(next, { kind: 'status', entityType: '', field: '', from: code, to });
}
