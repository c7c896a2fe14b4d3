/** Priorities (kept in rank order): create, update, delete, rename. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { duplicate, notFound } from '../schema.errors.js';
import type { SchemaDoc, SchemaUsage } from '../schema.types.js';
import { asChanges, clone, deleted, renamed, renameListed, withoutListed, type Body, type Edit, type RenameAnswer } from './edit.js';

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
  return deleted(withoutListed(doc, 'priorities', 'priority', code, usage.priorities[code] ?? 0), 'Schema.Priority', code);
}

export function renamePriority(doc: SchemaDoc, code: string, body: Body<typeof B.CodeRename>): Edit<RenameAnswer> {
  const next = renameListed(doc, 'priorities', 'priority', code, body.new_code);
  return renamed(next, { kind: 'priority', entityType: '', field: '', from: code, to: body.new_code });
}
