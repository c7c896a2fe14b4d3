import { describe, expect, it } from 'vitest';
import { resolveApplications, type ActiveTool } from '../../definitions/domain/catalog.js';
import type { ApplicationDef } from '../../definitions/domain/schema.types.js';
import type { ActionRecord } from './actions.rules.js';
import { customActionApplies, launchContext, launchPayload, listActions, mergeEnvironment, stepOf, type CustomAction } from './actions.rules.js';

const app = (code: string, extra: Partial<ApplicationDef> = {}): ApplicationDef => ({
  code,
  label: code.toUpperCase(),
  group: null,
  version: null,
  icon: null,
  executables: {},
  args: [],
  environment: {},
  ...extra,
});

const CATALOG = [
  app('maya2025', { group: 'maya', version: '2025', icon: 'maya', label: 'Maya 2025' }),
  app('nuke15', { group: 'nuke', version: '15.1', label: 'Nuke 15' }),
  app('blender'),
];

const custom = (id: string, extra: Partial<CustomAction> = {}): CustomAction => ({
  id,
  label: id,
  url: 'https://hooks.example.com/' + id,
  entity_types: ['Shot'],
  roles: null,
  icon: null,
  secret: null,
  ...extra,
});

const rec = (entityType: string, data: Record<string, unknown> = {}, id = `${entityType.toLowerCase()}-1`): ActionRecord => ({
  id,
  entityType,
  projectId: 'p1',
  data,
});

describe('listActions', () => {
  it('lists one launch action per allowed application, ids launch:<code>, app = group else code, variant = version', () => {
    const items = listActions({ applications: CATALOG, custom: [], entityType: 'Shot', recordCount: 1, role: 'Artist' });
    expect(items).toEqual([
      { id: 'launch:maya2025', kind: 'launch', label: 'Maya 2025', app: 'maya', variant: '2025', icon: 'maya', group: 'maya', order: 0 },
      { id: 'launch:nuke15', kind: 'launch', label: 'Nuke 15', app: 'nuke', variant: '15.1', group: 'nuke', order: 1 },
      { id: 'launch:blender', kind: 'launch', label: 'BLENDER', app: 'blender', order: 2 },
    ]);
  });

  it('lists launch actions only when exactly one record is given', () => {
    const two = listActions({ applications: CATALOG, custom: [custom('publish')], entityType: 'Shot', recordCount: 2, role: 'Artist' });
    expect(two.map((i) => i.id)).toEqual(['publish']);
    expect(two[0]).toEqual({ id: 'publish', kind: 'webhook', label: 'publish', order: 0 });
  });

  it('narrows launch actions by the project override and a Task step (the catalog rules)', () => {
    const overrides = { applications: ['maya2025', 'nuke15'], applicationsByStep: { comp: ['nuke15'], layout: [] } };
    const ids = (step?: string) =>
      listActions({ applications: resolveApplications(CATALOG, overrides, step), custom: [], entityType: 'Task', recordCount: 1, role: 'Artist' }).map(
        (i) => i.id,
      );
    expect(ids()).toEqual(['launch:maya2025', 'launch:nuke15']);
    expect(ids('comp')).toEqual(['launch:nuke15']);
    expect(ids('layout')).toEqual([]);
    expect(ids('anim')).toEqual(['launch:maya2025', 'launch:nuke15']);
    expect(stepOf(rec('Task', { step: 'comp' }))).toBe('comp');
    expect(stepOf(rec('Shot', { step: 'comp' }))).toBeUndefined();
  });

  it('lists custom actions by entity type and role, after the launch actions, in list order', () => {
    const list = [custom('a', { entity_types: ['Shot', 'Asset'] }), custom('b', { roles: ['Admin', 'Supervisor'] }), custom('c', { entity_types: ['Asset'] })];
    expect(listActions({ applications: [app('x')], custom: list, entityType: 'Shot', recordCount: 1, role: 'Artist' }).map((i) => [i.id, i.order])).toEqual([
      ['launch:x', 0],
      ['a', 1],
    ]);
    expect(listActions({ applications: [], custom: list, entityType: 'Shot', recordCount: 3, role: 'Supervisor' }).map((i) => i.id)).toEqual(['a', 'b']);
    expect(customActionApplies(list[2]!, 'Shot', 'Admin')).toBe(false);
  });
});

describe('mergeEnvironment', () => {
  it('keeps the last value of a key, but joins keys ending in PATH with ":" in order', () => {
    expect(
      mergeEnvironment([
        { MAYA_MODULE_PATH: '/app', LICENSE: 'a', PYTHONPATH: '/py' },
        { MAYA_MODULE_PATH: '/mtoa', LICENSE: 'b' },
        { MAYA_MODULE_PATH: '/yeti', PATH: '/bin', path_hint: 'x' },
        { PATH: '/usr/bin', path_hint: 'y' },
      ]),
    ).toEqual({ MAYA_MODULE_PATH: '/app:/mtoa:/yeti', LICENSE: 'b', PYTHONPATH: '/py', PATH: '/bin:/usr/bin', path_hint: 'y' });
  });
});

describe('launchPayload', () => {
  const tool = (t: string, version: string, args: string[], environment: Record<string, string>): ActiveTool => ({
    tool: t,
    label: t.toUpperCase(),
    icon: null,
    version,
    args,
    environment,
  });
  const project = { id: 'p1', entityType: 'Project', projectId: null, data: { code: 'DEMO', name: 'Demo' } };

  it('merges the app variant, then each active tool in order (environment and args)', () => {
    const maya = app('maya2025', {
      group: 'maya',
      version: '2025',
      executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
      args: ['-proj', '/p'],
      environment: { MAYA_MODULE_PATH: '/m', MAYA_VERSION: '2025' },
    });
    const tools = [
      tool('mtoa', '5.4.5', ['-mtoa'], { MAYA_MODULE_PATH: '/arnold', MAYA_VERSION: 'x' }),
      tool('yeti', '4.2.11', [], { MAYA_MODULE_PATH: '/yeti' }),
    ];
    const p = launchPayload(maya, tools, launchContext(project, rec('Shot', { code: 'SH010' }, 's1'), null));
    expect(p).toEqual({
      app: 'maya',
      variant: '2025',
      label: 'MAYA2025',
      executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
      args: ['-proj', '/p', '-mtoa'],
      environment: { MAYA_MODULE_PATH: '/m:/arnold:/yeti', MAYA_VERSION: 'x' },
      tools: [
        { tool: 'mtoa', label: 'MTOA', version: '5.4.5' },
        { tool: 'yeti', label: 'YETI', version: '4.2.11' },
      ],
      context: { project: { id: 'p1', code: 'DEMO', name: 'Demo' }, entity: { type: 'Shot', id: 's1', code: 'SH010' } },
    });
    expect(launchPayload(app('blender'), [], launchContext(project, rec('Shot', {}, 's1'), null))).not.toHaveProperty('executables');
  });

  it('with a Task: task is the Task, entity what its data.entity links to (or the Task itself without one)', () => {
    const task = rec('Task', { name: 'Comp', step: 'comp', entity: { type: 'Shot', id: 's1' } }, 't1');
    const shot = rec('Shot', { code: 'SH010' }, 's1');
    expect(launchContext(project, task, shot)).toEqual({
      project: { id: 'p1', code: 'DEMO', name: 'Demo' },
      entity: { type: 'Shot', id: 's1', code: 'SH010' },
      task: { id: 't1', name: 'Comp', step: 'comp' },
    });
    expect(launchContext(project, task, null).entity).toEqual({ type: 'Shot', id: 's1' });
    const loose = rec('Task', { name: 'Paint' }, 't2');
    expect(launchContext(project, loose, null)).toEqual({
      project: { id: 'p1', code: 'DEMO', name: 'Demo' },
      entity: { type: 'Task', id: 't2', name: 'Paint' },
      task: { id: 't2', name: 'Paint', step: null },
    });
  });
});
