/**
 * The launcher and tools catalogs and how a project's `data.overrides` narrows them
 * (docs/api-notes.md, "Catalogs"):
 * - applications: without a project the whole catalog; with one, its per-step list
 *   (`applicationsByStep[step]`) when that key is present, else its project-wide list
 *   (`applications`) when present, else the whole catalog.
 * - active tools: the selectors `"<tool>/<version>"` attached in `overrides.tools`; with a step
 *   whose key is present in `overrides.toolsByStep` (even as an empty list) only those attached
 *   selectors also listed there; an absent key keeps them all. A selector naming a tool or a
 *   version the catalog does not have, or that is not a string, is skipped.
 */
import type { ApplicationDef, ToolDef } from './schema.types.js';

/** The tools catalog while an Admin has not set one. */
export const DEFAULT_TOOLS: readonly ToolDef[] = [
  {
    tool: 'mtoa',
    label: 'Arnold for Maya (MtoA)',
    icon: 'arnold',
    variants: [
      { version: '5.4.5', args: [], environment: { MAYA_MODULE_PATH: '/opt/autodesk/arnold/maya2025', ARNOLD_CORE_VERSION: '7.3.5.0' } },
      { version: '5.3.5', args: [], environment: { MAYA_MODULE_PATH: '/opt/autodesk/arnold/maya2024', ARNOLD_CORE_VERSION: '7.2.5.0' } },
    ],
  },
  {
    tool: 'htoa',
    label: 'Arnold for Houdini (HtoA)',
    icon: 'arnold',
    variants: [{ version: '6.3.5.0', args: [], environment: { HOUDINI_PATH: '/opt/htoa/htoa-6.3.5.0_houdini-20.5;&', ARNOLD_CORE_VERSION: '7.3.5.0' } }],
  },
  {
    tool: 'redshift',
    label: 'Redshift',
    icon: 'redshift',
    variants: [
      { version: '2025.2.0', args: [], environment: { REDSHIFT_COREDATAPATH: '/usr/redshift', REDSHIFT_PLUG_IN_PATH: '/usr/redshift/redshift4maya/2025' } },
      { version: '3.6.05', args: [], environment: { REDSHIFT_COREDATAPATH: '/usr/redshift', REDSHIFT_PLUG_IN_PATH: '/usr/redshift/redshift4maya/2024' } },
    ],
  },
  {
    tool: 'renderman',
    label: 'RenderMan',
    icon: 'renderman',
    variants: [
      { version: '26.3', args: [], environment: { RMANTREE: '/opt/pixar/RenderManProServer-26.3', RFMTREE: '/opt/pixar/RenderManForMaya-26.3' } },
      { version: '27.0', args: [], environment: { RMANTREE: '/opt/pixar/RenderManProServer-27.0', RFMTREE: '/opt/pixar/RenderManForMaya-27.0' } },
    ],
  },
  {
    tool: 'vray',
    label: 'V-Ray',
    icon: 'vray',
    variants: [
      { version: '6.2', args: [], environment: { VRAY_FOR_MAYA2025_MAIN: '/usr/autodesk/maya2025/vray', VRAY_VERSION: '6.20.06' } },
      { version: '7.0', args: [], environment: { VRAY_FOR_MAYA2025_MAIN: '/usr/autodesk/maya2025/vray', VRAY_VERSION: '7.00.00' } },
    ],
  },
  {
    tool: 'yeti',
    label: 'Yeti',
    icon: 'yeti',
    variants: [
      { version: '4.2.11', args: [], environment: { YETI_HOME: '/opt/peregrinelabs/yeti-4.2.11', MAYA_MODULE_PATH: '/opt/peregrinelabs/yeti-4.2.11' } },
    ],
  },
  {
    tool: 'mgear',
    label: 'mGear',
    icon: 'mgear',
    variants: [{ version: '4.2.2', args: [], environment: { MAYA_MODULE_PATH: '/opt/mgear/4.2.2' } }],
  },
];

/** A project's `data.overrides`, as read from its record (any shape: only valid parts count). */
export type ProjectOverrides = Record<string, unknown>;

function stringList(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === 'string');
}

function stepList(map: unknown, step: string | undefined): string[] | undefined {
  if (step === undefined || typeof map !== 'object' || map === null || Array.isArray(map)) return undefined;
  if (!Object.hasOwn(map, step)) return undefined;
  return stringList((map as Record<string, unknown>)[step]) ?? [];
}

/** Rule 1: the applications a project (and step) may launch, in catalog order. */
export function resolveApplications(catalog: readonly ApplicationDef[], overrides: ProjectOverrides | null, step?: string): ApplicationDef[] {
  if (overrides === null) return [...catalog];
  const allowed = stepList(overrides.applicationsByStep, step) ?? stringList(overrides.applications);
  if (allowed === undefined) return [...catalog];
  const set = new Set(allowed);
  return catalog.filter((a) => set.has(a.code));
}

/** One attached tool variant, flattened (the active tool item). */
export interface ActiveTool {
  tool: string;
  label: string;
  icon: string | null;
  version: string;
  args: string[];
  environment: Record<string, string>;
}

/** Rule 2: the tool variants attached to a project (and step), in the order they are attached. */
export function resolveActiveTools(catalog: readonly ToolDef[], overrides: ProjectOverrides, step?: string): ActiveTool[] {
  let selectors = stringList(overrides.tools) ?? [];
  const perStep = stepList(overrides.toolsByStep, step);
  if (perStep !== undefined) {
    const keep = new Set(perStep);
    selectors = selectors.filter((s) => keep.has(s));
  }
  const out: ActiveTool[] = [];
  const seen = new Set<string>();
  for (const selector of selectors) {
    const slash = selector.indexOf('/');
    if (slash <= 0 || seen.has(selector)) continue;
    const name = selector.slice(0, slash);
    const version = selector.slice(slash + 1);
    const tool = catalog.find((t) => t.tool === name);
    const variant = tool?.variants.find((v) => v.version === version);
    if (!tool || !variant) continue;
    seen.add(selector);
    out.push({
      tool: tool.tool,
      label: tool.label,
      icon: tool.icon,
      version: variant.version,
      args: [...variant.args],
      environment: { ...variant.environment },
    });
  }
  return out;
}
