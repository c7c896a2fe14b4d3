/** Priorities (kept in rank order): create, update, delete, rename. */
import type * as B from '../bodies.js';
import { duplicate, inUse, notFound, Problems } from '../schema.errors.js';
import { CODE, type SchemaDoc, type SchemaUsage } from '../schema.types.js';
import { asChanges, clone, newCode, renamed, type Body, type Edit, type RenameAnswer } from './edit.js';

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
