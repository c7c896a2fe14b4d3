import { schemaBodies, type Problem } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { collect } from '../http/validation.js';
import { ActiveToolsQuery, ApplicationsQuery } from './schema.schema.js';

const {
  ApplicationsBody,
  BrandingBody,
  CodeRename,
  EntityCodeRename,
  EntityTypeBody,
  FieldBody,
  FieldPatch,
  ObjectTransitionsBody,
  OptionRename,
  PriorityBody,
  PriorityPatch,
  RenameBody,
  StatusBody,
  StatusPatch,
  StepBody,
  StepPatch,
  StepReorder,
  TaskTemplatesBody,
  ToolsBody,
  WorkflowBody,
} = schemaBodies;

/** The 422 problems of `value` as `loc.join('.')` → type. */
function problemsOf(schema: z.ZodType, value: unknown, source: 'body' | 'query' = 'body'): Record<string, string> {
  const problems: Problem[] = [];
  collect(schema, value, source, problems);
  return Object.fromEntries(problems.map((p) => [p.loc.join('.'), p.type]));
}

const ok = (schema: z.ZodType, value: unknown) => expect(problemsOf(schema, value)).toEqual({});

describe('entity type bodies', () => {
  it('EntityTypeBody: code pattern, name, project_scoped defaulting to true, unknown keys refused', () => {
    ok(EntityTypeBody, { code: 'Camera', name: 'Camera' });
    expect(EntityTypeBody.parse({ code: 'Camera', name: 'Camera' }).project_scoped).toBe(true);
    expect(EntityTypeBody.parse({ code: 'Camera', name: 'Camera', project_scoped: false }).project_scoped).toBe(false);
    expect(problemsOf(EntityTypeBody, { code: 'camera', name: '', colour: 1 })).toEqual({
      'body.code': 'string_pattern_mismatch',
      'body.name': 'string_too_short',
      'body.colour': 'extra_forbidden',
    });
    expect(problemsOf(EntityTypeBody, {})).toEqual({ 'body.code': 'missing', 'body.name': 'missing' });
    expect(problemsOf(EntityTypeBody, { code: 'C'.repeat(65), name: 'x' })).toEqual({ 'body.code': 'string_pattern_mismatch' });
  });

  it('RenameBody takes a name only; code renames follow the code patterns of their kind', () => {
    ok(RenameBody, { name: 'Cameras' });
    expect(problemsOf(RenameBody, { name: 'x', code: 'X' })).toEqual({ 'body.code': 'extra_forbidden' });
    ok(EntityCodeRename, { new_code: 'Rig' });
    expect(problemsOf(EntityCodeRename, { new_code: 'rig' })).toEqual({ 'body.new_code': 'string_pattern_mismatch' });
    ok(CodeRename, { new_code: 'needs-review' });
    expect(problemsOf(CodeRename, { new_code: 'a/b' })).toEqual({ 'body.new_code': 'string_pattern_mismatch' });
    expect(problemsOf(CodeRename, {})).toEqual({ 'body.new_code': 'missing' });
  });
});

describe('FieldBody', () => {
  it.each(['text', 'integer', 'float', 'boolean', 'date', 'datetime', 'enum', 'multi_enum', 'link', 'multi_link', 'json', 'url', 'color', 'duration'])(
    'accepts a %s field',
    (type) => ok(FieldBody, { code: 'f', name: 'F', type }),
  );

  it('refuses an unknown type, a bad code, a record column and unknown keys', () => {
    expect(problemsOf(FieldBody, { code: 'Lens', name: 'L', type: 'string', size: 3 })).toEqual({
      'body.code': 'string_pattern_mismatch',
      'body.type': 'enum',
      'body.size': 'extra_forbidden',
    });
    expect(problemsOf(FieldBody, { code: 'status', name: 'S', type: 'text' })).toEqual({ 'body.code': 'value_error' });
    expect(problemsOf(FieldBody, { code: 'project_id', name: 'S', type: 'text' })).toEqual({ 'body.code': 'value_error' });
  });

  it('options belong to enums, with unique strict codes; link_types to links', () => {
    ok(FieldBody, {
      code: 'lens',
      name: 'Lens',
      type: 'enum',
      options: [
        { code: 'wide', label: 'Wide', color: '#00ff00' },
        { code: 'tele', label: 'Tele' },
      ],
      required: true,
      default: 'wide',
      description: 'Which lens',
    });
    ok(FieldBody, { code: 'camera', name: 'Camera', type: 'multi_link', link_types: ['Camera', 'Asset'] });
    expect(
      problemsOf(FieldBody, {
        code: 'lens',
        name: 'Lens',
        type: 'enum',
        options: [
          { code: 'wide', label: 'Wide' },
          { code: 'wide', label: 'Again', extra: 1 },
          { code: 'x y', label: 'X', color: 'green' },
        ],
      }),
    ).toEqual({
      'body.options.1.code': 'value_error',
      'body.options.1.extra': 'extra_forbidden',
      'body.options.2.code': 'string_pattern_mismatch',
      'body.options.2.color': 'string_pattern_mismatch',
    });
    expect(
      problemsOf(FieldBody, {
        code: 'lens',
        name: 'Lens',
        type: 'enum',
        options: [
          { code: 'wide', label: 'Wide' },
          { code: 'wide', label: 'Again' },
        ],
      }),
    ).toEqual({
      'body.options.1.code': 'value_error',
    });
    expect(problemsOf(FieldBody, { code: 'n', name: 'N', type: 'text', options: [], link_types: ['Shot'] })).toEqual({
      'body.options': 'value_error',
      'body.link_types': 'value_error',
    });
    expect(problemsOf(FieldBody, { code: 'n', name: 'N', type: 'link', link_types: ['shot'] })).toEqual({ 'body.link_types.0': 'string_pattern_mismatch' });
  });

  it('checks a default against the type when the definition alone can tell', () => {
    ok(FieldBody, { code: 'n', name: 'N', type: 'integer', default: 3 });
    ok(FieldBody, { code: 'n', name: 'N', type: 'integer', default: null });
    ok(FieldBody, { code: 'n', name: 'N', type: 'json', default: { a: [1] } });
    ok(FieldBody, { code: 'n', name: 'N', type: 'multi_enum', options: [{ code: 'a', label: 'A' }], default: ['a'] });
    for (const [type, value] of [
      ['integer', 1.5],
      ['integer', '3'],
      ['float', 'x'],
      ['boolean', 'true'],
      ['text', 3],
      ['enum', 'missing'],
      ['multi_enum', 'a'],
      ['multi_enum', ['a', 'b']],
    ] as const) {
      const options = type.endsWith('enum') ? [{ code: 'a', label: 'A' }] : undefined;
      expect(problemsOf(FieldBody, { code: 'n', name: 'N', type, options, default: value }), `${type} ${JSON.stringify(value)}`).toEqual({
        'body.default': 'value_error',
      });
    }
  });

  it('FieldPatch cannot change the code or the type', () => {
    ok(FieldPatch, {});
    ok(FieldPatch, { name: 'N', description: 'Lens used', required: false, default: null, options: [{ code: 'a', label: 'A', color: null }] });
    expect(problemsOf(FieldPatch, { type: 'text', code: 'x' })).toEqual({ 'body.type': 'extra_forbidden', 'body.code': 'extra_forbidden' });
  });

  it('OptionRename needs two different well-formed codes', () => {
    ok(OptionRename, { from: 'wide', to: 'ultra-wide' });
    expect(problemsOf(OptionRename, { from: 'wide' })).toEqual({ 'body.to': 'missing' });
    expect(problemsOf(OptionRename, { from: 'wide', to: 'wide' })).toEqual({ 'body.to': 'value_error' });
  });
});

describe('statuses, steps, priorities', () => {
  it('StatusBody has a state of four and an optional scope; StatusPatch every key optional', () => {
    ok(StatusBody, { code: 'ip', name: 'In progress', color: '#ffaa00', icon: 'play', state: 'in_progress', entity_types: ['Shot'] });
    expect(problemsOf(StatusBody, { code: 'ip', name: 'x', state: 'started' })).toEqual({ 'body.state': 'enum' });
    expect(problemsOf(StatusBody, { code: 'ip', name: 'x' })).toEqual({ 'body.state': 'missing' });
    ok(StatusPatch, {});
    ok(StatusPatch, { state: 'done' });
    expect(problemsOf(StatusPatch, { code: 'x', entity_types: ['shot'] })).toEqual({
      'body.code': 'extra_forbidden',
      'body.entity_types.0': 'string_pattern_mismatch',
    });
  });

  it('StepBody, StepPatch and StepReorder (unique codes)', () => {
    ok(StepBody, { code: 'comp', name: 'Compositing', entity_types: [] });
    ok(StepPatch, { color: '#123456' });
    expect(problemsOf(StepPatch, { rank: 1 })).toEqual({ 'body.rank': 'extra_forbidden' });
    ok(StepReorder, { codes: ['comp', 'anim'] });
    expect(problemsOf(StepReorder, { codes: [] })).toEqual({ 'body.codes': 'too_short' });
    expect(problemsOf(StepReorder, { codes: ['comp', 'anim', 'comp'] })).toEqual({ 'body.codes.2': 'value_error' });
  });

  it('PriorityBody needs an integer rank', () => {
    ok(PriorityBody, { code: 'high', name: 'High', rank: 3 });
    expect(problemsOf(PriorityBody, { code: 'high', name: 'High', rank: 1.5 })).toEqual({ 'body.rank': 'int_type' });
    expect(problemsOf(PriorityBody, { code: 'high', name: 'High' })).toEqual({ 'body.rank': 'missing' });
    ok(PriorityPatch, { rank: -2 });
  });
});

describe('workflows, transitions, templates', () => {
  it('WorkflowBody: code alone (delete) or a full workflow with schemas', () => {
    ok(WorkflowBody, { code: 'feature' });
    ok(WorkflowBody, {
      code: 'feature',
      name: 'Feature',
      entity_type: 'Asset',
      field: 'asset_type',
      schemas: [{ option: 'character', steps: ['model', 'rig'] }],
    });
    expect(problemsOf(WorkflowBody, { code: 'f', field: 'asset_type' })).toEqual({ 'body.entity_type': 'value_error' });
    expect(problemsOf(WorkflowBody, { code: 'f', schemas: [{ option: 'a', steps: [] }] })).toEqual({ 'body.field': 'value_error' });
    expect(problemsOf(WorkflowBody, { code: 'f', entity_type: 'Asset', field: 'asset_type', schemas: [{ option: 'a', steps: [], extra: 1 }] })).toEqual({
      'body.schemas.0.extra': 'extra_forbidden',
    });
  });

  it('ObjectTransitionsBody: roles from the role list; an empty list is allowed', () => {
    ok(ObjectTransitionsBody, { entity_type: 'Shot', transitions: [] });
    ok(ObjectTransitionsBody, { entity_type: 'Shot', transitions: [{ from: 'wtg', to: ['ip'], roles: ['Artist', 'Admin'] }] });
    expect(problemsOf(ObjectTransitionsBody, { entity_type: 'Shot', transitions: [{ from: 'wtg', to: 'ip', roles: ['Boss'] }] })).toEqual({
      'body.transitions.0.to': 'list_type',
      'body.transitions.0.roles.0': 'enum',
    });
    expect(problemsOf(ObjectTransitionsBody, { entity_type: 'Shot' })).toEqual({ 'body.transitions': 'missing' });
  });

  it('TaskTemplatesBody: unique template codes, tasks with a step', () => {
    ok(TaskTemplatesBody, { templates: [] });
    ok(TaskTemplatesBody, {
      templates: [{ code: 'vfx', name: 'VFX shot', entity_type: 'Shot', tasks: [{ name: 'Comp', step: 'comp', estimate_minutes: 480 }] }],
    });
    expect(
      problemsOf(TaskTemplatesBody, {
        templates: [
          { code: 'vfx', name: 'A', entity_type: 'Shot', tasks: [{ name: 'Comp' }] },
          { code: 'vfx', name: 'B', entity_type: 'Shot', tasks: [{ name: 'Comp', step: 'comp', estimate_minutes: -1 }] },
        ],
      }),
    ).toEqual({ 'body.templates.0.tasks.0.step': 'missing', 'body.templates.1.tasks.0.estimate_minutes': 'greater_than_equal' });
    expect(
      problemsOf(TaskTemplatesBody, {
        templates: [
          { code: 'vfx', name: 'A', entity_type: 'Shot', tasks: [] },
          { code: 'vfx', name: 'B', entity_type: 'Shot', tasks: [] },
        ],
      }),
    ).toEqual({ 'body.templates.1.code': 'value_error' });
  });
});

describe('branding and catalogs', () => {
  it('BrandingBody: every key optional, colours #RRGGBB', () => {
    ok(BrandingBody, {});
    ok(BrandingBody, { studio_name: 'Reel', logo_media_key: 'logos/a.png', primary_color: '#112233', accent_color: null });
    expect(problemsOf(BrandingBody, { primary_color: 'red', motto: 'x' })).toEqual({
      'body.primary_color': 'string_pattern_mismatch',
      'body.motto': 'extra_forbidden',
    });
  });

  it('ApplicationsBody: unique codes, executables per platform only', () => {
    ok(ApplicationsBody, { applications: [] });
    ok(ApplicationsBody, {
      applications: [
        {
          code: 'maya-2025',
          label: 'Maya 2025',
          group: 'Maya',
          version: '2025',
          icon: 'maya',
          executables: { linux: '/usr/autodesk/maya2025/bin/maya', windows: 'C:\\Program Files\\Autodesk\\Maya2025\\bin\\maya.exe' },
          args: ['-proj', '.'],
          environment: { MAYA_DISABLE_CIP: '1' },
        },
      ],
    });
    expect(
      problemsOf(ApplicationsBody, {
        applications: [
          { code: 'nuke', label: 'Nuke', executables: { amiga: 'x' }, environment: { A: 1 } },
          { code: 'nuke', label: 'Nuke again' },
        ],
      }),
    ).toEqual({ 'body.applications.0.executables.amiga': 'extra_forbidden', 'body.applications.0.environment.A': 'string_type' });
    expect(
      problemsOf(ApplicationsBody, {
        applications: [
          { code: 'nuke', label: 'Nuke' },
          { code: 'nuke', label: 'Nuke again' },
        ],
      }),
    ).toEqual({
      'body.applications.1.code': 'value_error',
    });
  });

  it('ToolsBody: unique tools and versions, versions without slashes', () => {
    ok(ToolsBody, {
      tools: [{ tool: 'mtoa', label: 'Arnold for Maya', variants: [{ version: '5.4.2', args: [], environment: { ARNOLD_PLUGIN_PATH: '/x' } }] }],
    });
    expect(problemsOf(ToolsBody, { tools: [{ tool: 'mtoa', label: 'A', variants: [{ version: '5/4' }] }] })).toEqual({
      'body.tools.0.variants.0.version': 'string_pattern_mismatch',
    });
    expect(problemsOf(ToolsBody, { tools: [{ tool: 'mtoa', label: 'A', variants: [{ version: '5' }, { version: '5' }] }] })).toEqual({
      'body.tools.0.variants.1.version': 'value_error',
    });
    expect(
      problemsOf(ToolsBody, {
        tools: [
          { tool: 'mtoa', label: 'A', variants: [] },
          { tool: 'mtoa', label: 'B', variants: [] },
        ],
      }),
    ).toEqual({
      'body.tools.1.tool': 'value_error',
    });
    expect(problemsOf(ToolsBody, { tools: [{ tool: 'mtoa', label: 'A' }] })).toEqual({ 'body.tools.0.variants': 'missing' });
  });

  it('queries: tools/active needs a project_id UUID; applications takes both optionally', () => {
    expect(problemsOf(ActiveToolsQuery, {}, 'query')).toEqual({ 'query.project_id': 'missing' });
    expect(problemsOf(ActiveToolsQuery, { project_id: 'nope' }, 'query')).toEqual({ 'query.project_id': 'uuid_parsing' });
    expect(problemsOf(ActiveToolsQuery, { project_id: '0190A0B0-0000-7000-8000-000000000001', step: 'comp' }, 'query')).toEqual({});
    expect(ActiveToolsQuery.parse({ project_id: '0190A0B0-0000-7000-8000-000000000001' }).project_id).toBe('0190a0b0-0000-7000-8000-000000000001');
    expect(problemsOf(ApplicationsQuery, {}, 'query')).toEqual({});
    expect(problemsOf(ApplicationsQuery, { step: 'a/b' }, 'query')).toEqual({ 'query.step': 'string_pattern_mismatch' });
  });
});
