/** The studio branding, the launcher catalog and the tools catalog (each replaced whole). */
import type { schemaBodies as B } from '@reelbase/lib-platform';
import { Problems } from '../schema.errors.js';
import type { ApplicationDef, SchemaDoc, ToolDef } from '../schema.types.js';
import { asChanges, clone, uniqueCodes, type Body, type Edit } from './edit.js';

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
