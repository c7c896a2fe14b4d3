/** The built-in types, fields and statuses, added where the document lacks them. */
import { BUILTIN_STATUSES, BUILTIN_TYPES } from '../builtins.js';
import type { SchemaDoc } from '../schema.types.js';
import { asChanges, clone, fieldChange, type DefinitionChange, type Edit } from './edit.js';

/**
 * Adds every built-in type, built-in field and built-in status the document lacks (a first start, or a
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
  for (const b of BUILTIN_STATUSES) {
    const s = next.statuses.find((x) => x.code === b.code);
    if (!s) {
      const ns = structuredClone(b);
      next.statuses.push(ns);
      added.push(`status ${b.code}`);
      changes.push({ kind: 'Schema.Status', key: b.code, action: 'create', changes: asChanges(ns) });
      continue;
    }
    // A studio status of the same code: scoped to every type already, or FarmJob added to its scope.
    const missing = s.entity_types.length === 0 ? [] : b.entity_types.filter((t) => !s.entity_types.includes(t));
    if (!missing.length) continue;
    s.entity_types.push(...missing);
    added.push(`status ${b.code} for ${missing.join(', ')}`);
    changes.push({ kind: 'Schema.Status', key: b.code, action: 'update', changes: asChanges(s) });
  }
  if (!added.length) return null;
  return { doc: next, changes, result: { added } };
}
