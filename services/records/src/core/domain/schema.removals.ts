/**
 * The codes a new schema snapshot takes away from the held one, and which of them records still
 * use. ApplySchema with `refuse_removed_in_use` (the schema service's deletes) counts them under the
 * lock every record write holds while it validates and commits, and refuses the snapshot when one is
 * in use: a delete and a write racing it never both succeed (docs/architecture.md, "Records obey the
 * schema").
 */
import { AppError } from '@reelbase/lib-platform';
import type { SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import type { CodeUsage, Removal, SchemaUsage } from './core.ports.js';

const codes = (list: { code: string }[] | undefined) => new Set((list ?? []).map((x) => x.code));

/** Every code `held` has and `next` has not (a status out of a type's scope included). */
export function removals(held: SchemaSnapshot, next: SchemaSnapshot): Removal[] {
  const out: Removal[] = [];
  const nextTypes = new Map(next.entity_types.map((t) => [t.code, t]));
  for (const t of held.entity_types) {
    const n = nextTypes.get(t.code);
    if (!n) {
      out.push({ what: 'entity type', code: t.code, kind: 'entity_types', key: t.code, parts: [t.code] });
      continue;
    }
    const nextFields = new Map(n.fields.map((f) => [f.code, f]));
    for (const f of t.fields) {
      const nf = nextFields.get(f.code);
      if (!nf) {
        out.push({ what: 'field', code: `${t.code}.${f.code}`, kind: 'fields', key: `${t.code}.${f.code}`, parts: [t.code, f.code] });
        continue;
      }
      if (f.type !== 'enum' && f.type !== 'multi_enum') continue;
      const kept = codes(nf.options);
      for (const o of f.options ?? []) {
        if (kept.has(o.code)) continue;
        const code = `${t.code}.${f.code}.${o.code}`;
        out.push({ what: 'option', code, kind: 'options', key: code, parts: [t.code, f.code, o.code], multi: f.type === 'multi_enum' });
      }
    }
  }
  const nextStatuses = new Map(next.statuses.map((s) => [s.code, s]));
  const allTypes = held.entity_types.map((t) => t.code);
  for (const s of held.statuses) {
    const n = nextStatuses.get(s.code);
    if (!n) {
      out.push({ what: 'status', code: s.code, kind: 'statuses', key: s.code, parts: [s.code] });
      continue;
    }
    // An empty scope is every type.
    const before = s.entity_types?.length ? s.entity_types : allTypes;
    const after = new Set(n.entity_types?.length ? n.entity_types : next.entity_types.map((t) => t.code));
    for (const type of before) {
      if (!after.has(type)) out.push({ what: 'status', code: `${s.code} (${type})`, kind: 'status_types', key: `${type}.${s.code}`, parts: [type, s.code] });
    }
  }
  const nextSteps = codes(next.steps);
  for (const s of held.steps) if (!nextSteps.has(s.code)) out.push({ what: 'step', code: s.code, kind: 'steps', key: s.code, parts: [s.code] });
  const nextPriorities = codes(next.priorities);
  for (const p of held.priorities) {
    if (!nextPriorities.has(p.code)) out.push({ what: 'priority', code: p.code, kind: 'priorities', key: p.code, parts: [p.code] });
  }
  return out;
}

/** Throws 409 `code_in_use` (with `usage`) for the first removed code a record still uses. */
export function refuseInUse(list: readonly Removal[], usage: CodeUsage): void {
  for (const r of list) {
    const n = usage[r.kind][r.key] ?? 0;
    if (n > 0) throw AppError.conflict('code_in_use', `${r.what} ${r.code} is still used by ${n} record${n === 1 ? '' : 's'}`, { usage: n });
  }
}
