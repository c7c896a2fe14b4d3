/**
 * The two catalog rules: applications narrowed by a project's lists (the per-step one wins),
 * and active tools filtered by an explicit per-step list, even an empty one.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOOLS, resolveActiveTools, resolveApplications } from './catalog.js';
import type { ApplicationDef } from './schema.types.js';

const app = (code: string): ApplicationDef => ({ code, label: code, group: null, version: null, icon: null, executables: {}, args: [], environment: {} });
const CATALOG = ['maya', 'nuke', 'houdini', 'blender'].map(app);
const codes = (list: { code: string }[]) => list.map((a) => a.code);

describe('applications (rule 1)', () => {
  it('no project: the whole catalog; a project without overrides inherits it', () => {
    expect(codes(resolveApplications(CATALOG, null))).toEqual(['maya', 'nuke', 'houdini', 'blender']);
    expect(codes(resolveApplications(CATALOG, {}, 'comp'))).toEqual(['maya', 'nuke', 'houdini', 'blender']);
  });

  it('the project list filters, in catalog order; unknown codes are skipped', () => {
    expect(codes(resolveApplications(CATALOG, { applications: ['nuke', 'maya', 'max'] }))).toEqual(['maya', 'nuke']);
  });

  it('the per-step list wins over the project list, even when empty; another step falls back', () => {
    const o = { applications: ['maya', 'nuke'], applicationsByStep: { comp: ['nuke', 'houdini'], edit: [] } };
    expect(codes(resolveApplications(CATALOG, o, 'comp'))).toEqual(['nuke', 'houdini']);
    expect(codes(resolveApplications(CATALOG, o, 'edit'))).toEqual([]);
    expect(codes(resolveApplications(CATALOG, o, 'anim'))).toEqual(['maya', 'nuke']);
    expect(codes(resolveApplications(CATALOG, o))).toEqual(['maya', 'nuke']);
  });

  it('malformed overrides count as absent', () => {
    expect(codes(resolveApplications(CATALOG, { applications: 'maya', applicationsByStep: ['x'] }, 'comp'))).toEqual(codes(CATALOG));
  });
});

describe('active tools (rule 2)', () => {
  const sel = (list: { tool: string; version: string }[]) => list.map((t) => `${t.tool}/${t.version}`);
  const o = { tools: ['mtoa/5.4.5', 'redshift/2025.2.0', 'yeti/4.2.11'], toolsByStep: { lighting: ['mtoa/5.4.5', 'vray/7.0'], comp: [] } };

  it('every attached selector when no step is given or its key is absent', () => {
    expect(sel(resolveActiveTools(DEFAULT_TOOLS, o))).toEqual(['mtoa/5.4.5', 'redshift/2025.2.0', 'yeti/4.2.11']);
    expect(sel(resolveActiveTools(DEFAULT_TOOLS, o, 'anim'))).toEqual(['mtoa/5.4.5', 'redshift/2025.2.0', 'yeti/4.2.11']);
  });

  it('an explicit per-step list filters the attached selectors; an empty one filters everything out', () => {
    expect(sel(resolveActiveTools(DEFAULT_TOOLS, o, 'lighting'))).toEqual(['mtoa/5.4.5']);
    expect(resolveActiveTools(DEFAULT_TOOLS, o, 'comp')).toEqual([]);
  });

  it('selectors naming an unknown tool or version, malformed ones and duplicates are skipped', () => {
    const out = resolveActiveTools(DEFAULT_TOOLS, { tools: ['mtoa/9.9', 'nope/1', 'mtoa', '/5.4.5', 42, 'vray/6.2', 'vray/6.2'] });
    expect(sel(out)).toEqual(['vray/6.2']);
    expect(out[0]).toEqual({
      tool: 'vray',
      label: 'V-Ray',
      icon: 'vray',
      version: '6.2',
      args: [],
      environment: expect.objectContaining({ VRAY_VERSION: '6.20.06' }),
    });
  });

  it('no attached tools: nothing', () => {
    expect(resolveActiveTools(DEFAULT_TOOLS, {})).toEqual([]);
  });
});
