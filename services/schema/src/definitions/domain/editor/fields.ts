/** Fields of an entity type and their options: create, update, delete, rename an option. */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { builtin, duplicate, inUse, notFound, Problems } from '../schema.errors.js';
import { LINK_TYPES, OPTION_TYPES, RECORD_COLUMNS, type FieldDef, type OptionDef, type SchemaDoc, type SchemaUsage } from '../schema.types.js';
import { clone, entity, field, fieldChange, renamed, typesExist, uniqueCodes, type Body, type Edit, type RenameAnswer } from './edit.js';

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

export function renameOption(doc: SchemaDoc, typeCode: string, fieldCode: string, body: Body<typeof B.OptionRename>): Edit<RenameAnswer> {
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
