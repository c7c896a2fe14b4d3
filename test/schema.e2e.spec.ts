/**
 * The schema and catalog routes against the whole stack: every route refuses anonymous callers
 * (401) and, for changes, every role but Admin (403, before the body is read); each definition
 * kind goes through create, duplicate (409 duplicate_code), bad body (422), unknown code (404),
 * use by a record (409 code_in_use with usage), built-in codes (409 builtin), rename and delete;
 * the launcher and tools catalogs follow a project's overrides, an explicit empty per-step list
 * included; a schema change reaches the event log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import { openEventSocket } from './support/ws.client.js';
// The answer schemas the OpenAPI document is written from: every answer below must fit them.
import * as Out from '../services/gateway/src/schemas/schema.schema.js';

/** Fails naming every mismatch when `value` does not fit the documented `schema`. */
function fits(schema: { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } }, value: unknown): void {
  const r = schema.safeParse(value);
  expect(r.success, `${JSON.stringify(r.error?.issues)} in ${JSON.stringify(value).slice(0, 500)}`).toBe(true);
}

interface Route {
  method: string;
  path: string;
  body?: unknown;
}

/** Every change route of the schema surface, with a well-formed body. */
const MUTATIONS: Route[] = [
  { method: 'POST', path: '/schema/entity-types', body: { code: 'Gadget', name: 'Gadget' } },
  { method: 'PATCH', path: '/schema/entity-types/Gadget', body: { name: 'Gadgets' } },
  { method: 'DELETE', path: '/schema/entity-types/Gadget' },
  { method: 'POST', path: '/schema/entity-types/Gadget/rename-code', body: { new_code: 'Gizmo' } },
  { method: 'POST', path: '/schema/entity-types/Shot/fields', body: { code: 'lens', name: 'Lens', type: 'text' } },
  { method: 'PATCH', path: '/schema/entity-types/Shot/fields/lens', body: { required: false } },
  { method: 'DELETE', path: '/schema/entity-types/Shot/fields/lens' },
  { method: 'POST', path: '/schema/entity-types/Asset/fields/asset_type/rename-option', body: { from: 'prop', to: 'props' } },
  { method: 'POST', path: '/schema/statuses', body: { code: 'ip', name: 'In progress', state: 'in_progress' } },
  { method: 'PATCH', path: '/schema/statuses/ip', body: { name: 'Working' } },
  { method: 'DELETE', path: '/schema/statuses/ip?entity_code=Shot' },
  { method: 'POST', path: '/schema/statuses/ip/rename', body: { new_code: 'wip' } },
  { method: 'POST', path: '/schema/steps', body: { code: 'comp', name: 'Comp' } },
  { method: 'POST', path: '/schema/steps/reorder', body: { codes: ['comp'] } },
  { method: 'PATCH', path: '/schema/steps/comp', body: { name: 'Compositing' } },
  { method: 'DELETE', path: '/schema/steps/comp' },
  { method: 'POST', path: '/schema/steps/comp/rename', body: { new_code: 'cmp' } },
  { method: 'POST', path: '/schema/workflows', body: { code: 'feature' } },
  { method: 'POST', path: '/schema/workflows/delete', body: { code: 'feature' } },
  { method: 'POST', path: '/schema/transitions', body: { entity_type: 'Shot', transitions: [] } },
  { method: 'PUT', path: '/schema/task-templates', body: { templates: [] } },
  { method: 'POST', path: '/schema/priorities', body: { code: 'high', name: 'High', rank: 3 } },
  { method: 'PATCH', path: '/schema/priorities/high', body: { rank: 4 } },
  { method: 'DELETE', path: '/schema/priorities/high' },
  { method: 'POST', path: '/schema/priorities/high/rename', body: { new_code: 'urgent' } },
  { method: 'PUT', path: '/branding', body: { studio_name: 'Reel' } },
  { method: 'PUT', path: '/schema/applications', body: { applications: [] } },
  { method: 'PUT', path: '/schema/tools', body: { tools: [] } },
];

const READS = [
  '/schema',
  '/schema/usage',
  '/branding',
  '/schema/applications',
  '/schema/tools',
  '/schema/tools/active?project_id=0190a0b0-0000-7000-8000-0000000000f1',
];

describe('schema and catalog routes (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let others: Session[];
  let projectId: string;
  let shotId: string;
  let api: Api;

  const ok = async (method: string, path: string, body?: unknown) => expectStatus(await api.call(method, path, { body }), 200, `${method} ${path}`);

  beforeAll(async () => {
    e = await startE2EStack('schema');
    admin = await bootstrapAdmin(e.api);
    api = admin.api;
    others = [
      await createUser(api, 'Supervisor', 'sup@studio.test'),
      await createUser(api, 'Coordinator', 'coord@studio.test'),
      await createUser(api, 'Artist', 'artist@studio.test'),
      await createUser(api, 'Viewer', 'viewer@studio.test'),
    ];
    projectId = expectStatus(await api.post('/entities/Project', { data: { name: 'Schema Show', code: 'sch' } }), 200, 'project').id;
    shotId = expectStatus(await api.post('/entities/Shot', { project_id: projectId, data: { code: 'sh010' } }), 200, 'shot').id;
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('every route: 401 without a token; changes 403 for every role but Admin, before the body is read; reads for every role', async () => {
    for (const r of MUTATIONS) {
      expectError(await e.api.call(r.method, r.path, { body: r.body }), 401, 'unauthenticated');
      for (const s of others) {
        expectError(await s.api.call(r.method, r.path, { body: r.body }), 403, 'forbidden');
        expectError(await s.api.call(r.method, r.path, { body: { not: 'a valid body' } }), 403, 'forbidden');
      }
    }
    for (const path of READS) {
      expectError(await e.api.get(path), 401, 'unauthenticated');
      const viewer = others.at(-1)!;
      const res = await viewer.api.get(path);
      // The tools/active read names a project that does not exist: 404 after the role check passed.
      expect(res.status, `${path}: ${res.text}`).toBe(path.startsWith('/schema/tools/active') ? 404 : 200);
    }
    // Nothing was changed by the refused calls.
    const schema = expectStatus(await api.get('/schema'), 200);
    expect(schema.entity_types.map((t: any) => t.code)).not.toContain('Gadget');
    expect(schema.statuses.map((s: any) => s.code)).not.toContain('ip');
  });

  it('GET /schema: the built-in types and fields are seeded; /schema/usage counts records', async () => {
    const schema = expectStatus(await api.get('/schema'), 200);
    fits(Out.SchemaOut, schema);
    for (const key of ['entity_types', 'statuses', 'steps', 'priorities', 'workflows', 'transitions', 'task_templates'])
      expect(schema, key).toHaveProperty(key);
    const shot = schema.entity_types.find((t: any) => t.code === 'Shot');
    expect(shot).toMatchObject({ builtin: true, project_scoped: true });
    expect(shot.fields.map((f: any) => f.code)).toEqual(expect.arrayContaining(['code', 'description', 'sequence', 'cut_in', 'cut_out']));
    expect(shot.fields.find((f: any) => f.code === 'cut_in')).toMatchObject({ type: 'integer', builtin: true, required: false });
    const usage = expectStatus(await api.get('/schema/usage'), 200);
    fits(Out.UsageOut, usage);
    expect(Object.keys(usage).sort()).toEqual(['entity_types', 'fields', 'priorities', 'statuses', 'steps']);
    expect(usage.entity_types.Shot).toBe(1);
    expect(usage.entity_types.Project).toBe(1);
    expect(usage.fields['Shot.code']).toBe(1);
  });

  it('entity types and fields: create, 409 duplicate_code / builtin / code_in_use with usage, 404, 422, rename, delete', async () => {
    const cam = await ok('POST', '/schema/entity-types', { code: 'Camera', name: 'Camera', project_scoped: false });
    expect(cam).toMatchObject({ code: 'Camera', name: 'Camera', builtin: false, project_scoped: false });
    fits(Out.EntityTypeOut, cam);
    expectError(await api.post('/schema/entity-types', { code: 'Camera', name: 'Again' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/entity-types', { code: 'Shot', name: 'Shot' }), 409, 'duplicate_code');
    expectValidation(await api.post('/schema/entity-types', { code: 'camera', name: 'x' }), ['body', 'code']);
    expectValidation(await api.post('/schema/entity-types', { code: 'Rig', name: 'Rig', colour: 'red' }), ['body', 'colour']);
    expect((await ok('PATCH', '/schema/entity-types/Camera', { name: 'Cameras' })).name).toBe('Cameras');
    expectError(await api.patch('/schema/entity-types/Nope', { name: 'x' }), 404, 'not_found');
    expectValidation(await api.patch('/schema/entity-types/Camera', { name: 'x', code: 'Other' }), ['body', 'code']);
    expectError(await api.delete('/schema/entity-types/Shot'), 409, 'builtin');
    expectError(await api.delete('/schema/entity-types/Nope'), 404, 'not_found');
    expectError(await api.post('/schema/entity-types/Shot/rename-code', { new_code: 'Shots' }), 409, 'builtin');
    expectError(await api.post('/schema/entity-types/Nope/rename-code', { new_code: 'Nada' }), 404, 'not_found');
    expectError(await api.post('/schema/entity-types/Camera/rename-code', { new_code: 'Shot' }), 409, 'duplicate_code');
    expectValidation(await api.post('/schema/entity-types/Camera/rename-code', { new_code: 'cam' }), ['body', 'new_code']);

    const lens = await ok('POST', '/schema/entity-types/Camera/fields', {
      code: 'lens',
      name: 'Lens',
      type: 'enum',
      options: [
        { code: 'wide', label: 'Wide' },
        { code: 'tele', label: 'Tele' },
      ],
    });
    expect(lens).toMatchObject({ code: 'lens', type: 'enum', builtin: false, options: [{ code: 'wide' }, { code: 'tele' }] });
    fits(Out.FieldOut, lens);
    expectError(await api.post('/schema/entity-types/Camera/fields', { code: 'lens', name: 'Lens', type: 'text' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/entity-types/Nope/fields', { code: 'lens', name: 'Lens', type: 'text' }), 404, 'not_found');
    expectValidation(await api.post('/schema/entity-types/Camera/fields', { code: 'status', name: 'S', type: 'text' }), ['body', 'code']);
    expectValidation(await api.post('/schema/entity-types/Camera/fields', { code: 'iso', name: 'ISO', type: 'number' }), ['body', 'type']);
    expect((await ok('PATCH', '/schema/entity-types/Camera/fields/lens', { description: 'Lens kind' })).description).toBe('Lens kind');
    expectError(await api.patch('/schema/entity-types/Camera/fields/nope', { name: 'x' }), 404, 'not_found');
    expectValidation(await api.patch('/schema/entity-types/Camera/fields/lens', { type: 'text' }), ['body', 'type']);
    expectError(await api.delete('/schema/entity-types/Shot/fields/code'), 409, 'builtin');
    // Built-in option codes (a User's role) are neither renamed nor dropped.
    expectError(await api.post('/schema/entity-types/User/fields/role/rename-option', { from: 'Viewer', to: 'Guest' }), 409, 'builtin');
    const roles = ['Admin', 'Supervisor', 'Coordinator', 'Artist'].map((code) => ({ code, label: code }));
    expectError(await api.patch('/schema/entity-types/User/fields/role', { options: roles }), 409, 'builtin');
    expectError(await api.delete('/schema/entity-types/Camera/fields/nope'), 404, 'not_found');

    // A record of the new type, by the very next request; then its codes are in use.
    const rec = expectStatus(await api.post('/entities/Camera', { data: { lens: 'wide' } }), 200, 'Camera record');
    const inUse = await api.delete('/schema/entity-types/Camera/fields/lens');
    expectError(inUse, 409, 'code_in_use');
    expect(inUse.body.usage).toBe(1);
    const typeInUse = await api.delete('/schema/entity-types/Camera');
    expectError(typeInUse, 409, 'code_in_use');
    expect(typeInUse.body.usage).toBe(1);
    const dropped = await api.patch('/schema/entity-types/Camera/fields/lens', { options: [{ code: 'tele', label: 'Tele' }] });
    expectError(dropped, 409, 'code_in_use');
    expect(dropped.body.usage).toBe(1);

    expectError(await api.post('/schema/entity-types/Camera/fields/lens/rename-option', { from: 'wide', to: 'tele' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/entity-types/Camera/fields/lens/rename-option', { from: 'fisheye', to: 'fish' }), 404, 'not_found');
    expectValidation(await api.post('/schema/entity-types/Camera/fields/lens/rename-option', { from: 'wide' }), ['body', 'to']);
    const opt = await ok('POST', '/schema/entity-types/Camera/fields/lens/rename-option', { from: 'wide', to: 'ultra-wide' });
    expect(opt).toMatchObject({ old_code: 'wide', new_code: 'ultra-wide', rewritten: 1 });
    fits(Out.RenameOut, opt);
    expect(expectStatus(await api.get(`/entities/Camera/${rec.id}`), 200).data.lens).toBe('ultra-wide');

    const renamed = await ok('POST', '/schema/entity-types/Camera/rename-code', { new_code: 'Cam' });
    expect(renamed).toMatchObject({ old_code: 'Camera', new_code: 'Cam', rewritten: 1 });
    expect(expectStatus(await api.get(`/entities/Cam/${rec.id}`), 200).entity_type).toBe('Cam');

    // A retired record still uses its codes (it can be revived).
    expectStatus(await api.delete(`/entities/Cam/${rec.id}`), 200, 'retire');
    expect((await api.delete('/schema/entity-types/Cam/fields/lens')).body).toMatchObject({ code: 'code_in_use', usage: 1 });

    // An unused custom type and field go.
    await ok('POST', '/schema/entity-types', { code: 'Lamp', name: 'Lamp' });
    await ok('POST', '/schema/entity-types/Lamp/fields', { code: 'watts', name: 'Watts', type: 'integer', default: 800 });
    await ok('DELETE', '/schema/entity-types/Lamp/fields/watts');
    expectError(await api.delete('/schema/entity-types/Lamp/fields/watts'), 404, 'not_found');
    fits(Out.DeletedOut, await ok('DELETE', '/schema/entity-types/Lamp'));
    expectError(await api.delete('/schema/entity-types/Lamp'), 404, 'not_found');
  });

  it('statuses: create, 409, 422, 404, code_in_use with usage, rename cascading to records, scoped delete', async () => {
    const ip = await ok('POST', '/schema/statuses', { code: 'ip', name: 'In progress', state: 'in_progress', color: '#ffaa00' });
    expect(ip).toMatchObject({ code: 'ip', name: 'In progress', state: 'in_progress', entity_types: [] });
    fits(Out.StatusOut, ip);
    expectError(await api.post('/schema/statuses', { code: 'ip', name: 'Again', state: 'done' }), 409, 'duplicate_code');
    expectValidation(await api.post('/schema/statuses', { code: 'x', name: 'X', state: 'started' }), ['body', 'state']);
    expectValidation(await api.post('/schema/statuses', { code: 'x', name: 'X' }), ['body', 'state']);
    expect((await ok('PATCH', '/schema/statuses/ip', { color: '#00ff00' })).color).toBe('#00ff00');
    expectError(await api.patch('/schema/statuses/nope', { name: 'x' }), 404, 'not_found');
    expectValidation(await api.patch('/schema/statuses/ip', { code: 'other' }), ['body', 'code']);

    expectStatus(await api.patch(`/entities/Shot/${shotId}`, { status: 'ip' }), 200, 'shot in ip');
    const inUse = await api.delete('/schema/statuses/ip');
    expectError(inUse, 409, 'code_in_use');
    expect(inUse.body.usage).toBe(1);

    await ok('POST', '/schema/statuses', { code: 'fin', name: 'Final', state: 'done' });
    expectError(await api.post('/schema/statuses/ip/rename', { new_code: 'fin' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/statuses/nope/rename', { new_code: 'x' }), 404, 'not_found');
    expectValidation(await api.post('/schema/statuses/ip/rename', { new_code: 'a/b' }), ['body', 'new_code']);
    expect(await ok('POST', '/schema/statuses/ip/rename', { new_code: 'wip' })).toMatchObject({ old_code: 'ip', new_code: 'wip', rewritten: 1 });
    expect(expectStatus(await api.get(`/entities/Shot/${shotId}`), 200).status).toBe('wip');
    expect(expectStatus(await api.get('/schema/usage'), 200).statuses).toMatchObject({ wip: 1 });

    // Taking Shot out of a status scoped to every type leaves every other type.
    const narrowed = await ok('DELETE', '/schema/statuses/fin?entity_code=Shot');
    fits(Out.StatusDeleteOut, narrowed);
    expect(narrowed.entity_types).not.toContain('Shot');
    expect(narrowed.entity_types).toEqual(expect.arrayContaining(['Asset', 'Task']));
    expectValidation(await api.delete('/schema/statuses/fin?entity_code=shot'), ['query', 'entity_code']);
    await ok('DELETE', '/schema/statuses/fin');
    expectError(await api.delete('/schema/statuses/fin'), 404, 'not_found');
  });

  it('steps and priorities: create, reorder, 409, 422, 404, code_in_use, rename cascading to tasks, delete', async () => {
    await ok('POST', '/schema/steps', { code: 'comp', name: 'Comp' });
    await ok('POST', '/schema/steps', { code: 'anim', name: 'Animation' });
    expectError(await api.post('/schema/steps', { code: 'comp', name: 'Again' }), 409, 'duplicate_code');
    fits(Out.StepsOut, await ok('POST', '/schema/steps/reorder', { codes: ['anim', 'comp'] }));
    expect(expectStatus(await api.get('/schema'), 200).steps.map((s: any) => s.code)).toEqual(['anim', 'comp']);
    expectValidation(await api.post('/schema/steps/reorder', { codes: ['comp'] }), ['body', 'codes']);
    expectValidation(await api.post('/schema/steps/reorder', { codes: ['comp', 'anim', 'comp'] }), ['body', 'codes']);
    expect((await ok('PATCH', '/schema/steps/comp', { name: 'Compositing' })).name).toBe('Compositing');
    expectError(await api.patch('/schema/steps/nope', { name: 'x' }), 404, 'not_found');

    await ok('POST', '/schema/priorities', { code: 'high', name: 'High', rank: 3 });
    await ok('POST', '/schema/priorities', { code: 'low', name: 'Low', rank: 1 });
    expectError(await api.post('/schema/priorities', { code: 'high', name: 'Again', rank: 2 }), 409, 'duplicate_code');
    expectValidation(await api.post('/schema/priorities', { code: 'mid', name: 'Mid', rank: 1.5 }), ['body', 'rank']);
    const high = await ok('PATCH', '/schema/priorities/high', { rank: 5 });
    fits(Out.PriorityOut, high);
    expect(high.rank).toBe(5);
    expectError(await api.patch('/schema/priorities/nope', { rank: 1 }), 404, 'not_found');

    const task = expectStatus(
      await api.post('/entities/Task', {
        project_id: projectId,
        data: { name: 'Comp sh010', step: 'comp', priority: 'high', entity: { type: 'Shot', id: shotId } },
      }),
      200,
      'task',
    );
    const stepInUse = await api.delete('/schema/steps/comp');
    expectError(stepInUse, 409, 'code_in_use');
    expect(stepInUse.body.usage).toBe(1);
    const prioInUse = await api.delete('/schema/priorities/high');
    expectError(prioInUse, 409, 'code_in_use');
    expect(prioInUse.body.usage).toBe(1);

    expectError(await api.post('/schema/steps/comp/rename', { new_code: 'anim' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/steps/nope/rename', { new_code: 'x' }), 404, 'not_found');
    expect(await ok('POST', '/schema/steps/comp/rename', { new_code: 'cmp' })).toMatchObject({ old_code: 'comp', new_code: 'cmp', rewritten: 1 });
    expectError(await api.post('/schema/priorities/high/rename', { new_code: 'low' }), 409, 'duplicate_code');
    expectError(await api.post('/schema/priorities/nope/rename', { new_code: 'x' }), 404, 'not_found');
    expect(await ok('POST', '/schema/priorities/high/rename', { new_code: 'urgent' })).toMatchObject({ old_code: 'high', new_code: 'urgent', rewritten: 1 });
    expect(expectStatus(await api.get(`/entities/Task/${task.id}`), 200).data).toMatchObject({ step: 'cmp', priority: 'urgent' });

    await ok('DELETE', '/schema/steps/anim');
    expectError(await api.delete('/schema/steps/anim'), 404, 'not_found');
    await ok('DELETE', '/schema/priorities/low');
    expectError(await api.delete('/schema/priorities/low'), 404, 'not_found');
  });

  it('workflows, transitions, task templates and branding', async () => {
    await ok('POST', '/schema/steps', { code: 'model', name: 'Model' });
    const wf = await ok('POST', '/schema/workflows', {
      code: 'assets',
      name: 'Assets',
      entity_type: 'Asset',
      field: 'asset_type',
      schemas: [{ option: 'character', steps: ['model'] }],
    });
    expect(wf).toMatchObject({ code: 'assets', entity_type: 'Asset', field: 'asset_type' });
    fits(Out.WorkflowOut, wf);
    expectError(await api.post('/schema/workflows', { code: 'assets' }), 409, 'duplicate_code');
    expectValidation(await api.post('/schema/workflows', { code: 'x', field: 'asset_type' }), ['body', 'entity_type']);
    expect(expectStatus(await api.get('/schema'), 200).workflows.map((w: any) => w.code)).toContain('assets');
    await ok('POST', '/schema/workflows/delete', { code: 'assets' });
    expectError(await api.post('/schema/workflows/delete', { code: 'assets' }), 404, 'not_found');

    await ok('POST', '/schema/statuses', { code: 'rev', name: 'Review', state: 'in_progress' });
    const set = await ok('POST', '/schema/transitions', { entity_type: 'Shot', transitions: [{ from: 'wip', to: ['rev'], roles: ['Artist', 'Admin'] }] });
    expect(set).toMatchObject({ entity_type: 'Shot', transitions: [{ from: 'wip', to: ['rev'] }] });
    fits(Out.TransitionsOut, set);
    expect(expectStatus(await api.get('/schema'), 200).transitions.Shot).toEqual([expect.objectContaining({ from: 'wip', to: ['rev'] })]);
    expectValidation(await api.post('/schema/transitions', { entity_type: 'Shot', transitions: [{ from: 'wip', to: ['rev'], roles: ['Boss'] }] }), [
      'body',
      'transitions',
      0,
      'roles',
      0,
    ]);
    await ok('POST', '/schema/transitions', { entity_type: 'Shot', transitions: [] });
    expect(expectStatus(await api.get('/schema'), 200).transitions.Shot ?? []).toEqual([]);

    const templates = await ok('PUT', '/schema/task-templates', {
      templates: [{ code: 'char', name: 'Character', entity_type: 'Asset', tasks: [{ name: 'Model', step: 'model', estimate_minutes: 960 }] }],
    });
    fits(Out.TaskTemplatesOut, templates);
    expect(templates.templates).toEqual([expect.objectContaining({ code: 'char', tasks: [expect.objectContaining({ step: 'model' })] })]);
    expectValidation(
      await api.call('PUT', '/schema/task-templates', {
        body: { templates: [{ code: 'x', name: 'X', entity_type: 'Asset', tasks: [{ name: 'T', step: 'nope' }] }] },
      }),
      ['body', 'templates', 0, 'tasks', 0, 'step'],
    );
    expect(expectStatus(await api.get('/schema'), 200).task_templates.map((t: any) => t.code)).toEqual(['char']);

    const put = await ok('PUT', '/branding', { studio_name: 'Reel Studio', primary_color: '#112233' });
    fits(Out.BrandingOut, put);
    expect(put).toMatchObject({ studio_name: 'Reel Studio', primary_color: '#112233', logo_media_key: null, accent_color: null });
    expect(expectStatus(await others.at(-1)!.api.get('/branding'), 200)).toEqual(put);
    expectValidation(await api.call('PUT', '/branding', { body: { primary_color: 'blue' } }), ['body', 'primary_color']);
    expectValidation(await api.call('PUT', '/branding', { body: { motto: 'x' } }), ['body', 'motto']);
  });

  it('applications follow rule 1: whole catalog, the project list, the per-step list (even empty) over it', async () => {
    const app = (code: string) => ({ code, label: code.toUpperCase(), group: 'DCC', executables: { linux: `/opt/${code}/bin/${code}` } });
    const catalog = await ok('PUT', '/schema/applications', { applications: [app('maya'), app('nuke'), app('houdini')] });
    fits(Out.ApplicationsOut, catalog);
    expect(catalog.applications.map((a: any) => a.code)).toEqual(['maya', 'nuke', 'houdini']);
    expectValidation(await api.call('PUT', '/schema/applications', { body: { applications: [app('maya'), app('maya')] } }), [
      'body',
      'applications',
      1,
      'code',
    ]);
    const codes = async (query: string) =>
      expectStatus(await others.at(-1)!.api.get(`/schema/applications${query}`), 200, query).applications.map((a: any) => a.code);

    expect(await codes('')).toEqual(['maya', 'nuke', 'houdini']);
    expect(await codes(`?project_id=${projectId}`)).toEqual(['maya', 'nuke', 'houdini']); // no override: inherits
    const show = expectStatus(
      await api.post('/entities/Project', {
        data: { name: 'Overrides', code: 'ovr', overrides: { applications: ['maya', 'nuke'], applicationsByStep: { cmp: ['nuke'], fx: [] } } },
      }),
      200,
    ).id;
    expect(await codes(`?project_id=${show}`)).toEqual(['maya', 'nuke']);
    expect(await codes(`?project_id=${show}&step=cmp`)).toEqual(['nuke']);
    expect(await codes(`?project_id=${show}&step=fx`)).toEqual([]);
    expect(await codes(`?project_id=${show}&step=anim`)).toEqual(['maya', 'nuke']);
    expectError(await api.get('/schema/applications?project_id=0190a0b0-0000-7000-8000-0000000000f1'), 404, 'not_found');
    expectValidation(await api.get('/schema/applications?project_id=nope'), ['query', 'project_id']);
  });

  it('tools: built-in defaults, then rule 2 of tools/active: selectors, an explicit empty per-step list, unknown selectors skipped', async () => {
    const defaultCatalog = expectStatus(await others.at(-1)!.api.get('/schema/tools'), 200);
    fits(Out.ToolsOut, defaultCatalog);
    const defaults = defaultCatalog.tools;
    expect(defaults.map((t: any) => t.tool)).toEqual(expect.arrayContaining(['mtoa', 'htoa', 'redshift', 'renderman', 'vray', 'yeti', 'mgear']));
    for (const t of defaults) expect(t.variants.length, t.tool).toBeGreaterThan(0);

    const tools = {
      tools: [
        {
          tool: 'mtoa',
          label: 'Arnold for Maya',
          icon: 'arnold',
          variants: [{ version: '5.4.5', args: ['-r', 'arnold'], environment: { ARNOLD_LICENSE: 'a' } }],
        },
        { tool: 'redshift', label: 'Redshift', variants: [{ version: '2025.2.0', environment: { REDSHIFT_PATH: '/opt/rs' } }, { version: '3.6.05' }] },
      ],
    };
    expect((await ok('PUT', '/schema/tools', tools)).tools.map((t: any) => t.tool)).toEqual(['mtoa', 'redshift']);
    expectValidation(await api.call('PUT', '/schema/tools', { body: { tools: [{ tool: 'mtoa', label: 'A', variants: [{ version: '5/4' }] }] } }), [
      'body',
      'tools',
      0,
      'variants',
      0,
      'version',
    ]);

    const lit = expectStatus(
      await api.post('/entities/Project', {
        data: {
          name: 'Lit',
          code: 'lit',
          overrides: {
            tools: ['mtoa/5.4.5', 'redshift/2025.2.0', 'vray/6.2', 'mtoa/0.0', 'not-a-selector'],
            toolsByStep: { cmp: [], light: ['redshift/2025.2.0'] },
          },
        },
      }),
      200,
    ).id;
    const active = async (query: string) => expectStatus(await others.at(-1)!.api.get(`/schema/tools/active?project_id=${lit}${query}`), 200, query).tools;

    const all = await active('');
    fits(Out.ActiveToolsOut, { tools: all });
    expect(all).toEqual([
      { tool: 'mtoa', label: 'Arnold for Maya', icon: 'arnold', version: '5.4.5', args: ['-r', 'arnold'], environment: { ARNOLD_LICENSE: 'a' } },
      { tool: 'redshift', label: 'Redshift', icon: null, version: '2025.2.0', args: [], environment: { REDSHIFT_PATH: '/opt/rs' } },
    ]);
    expect(await active('&step=cmp')).toEqual([]); // an explicit empty list filters everything out
    expect((await active('&step=light')).map((t: any) => `${t.tool}/${t.version}`)).toEqual(['redshift/2025.2.0']);
    expect(await active('&step=anim')).toEqual(all); // an absent key keeps all
    expect(expectStatus(await api.get(`/schema/tools/active?project_id=${projectId}`), 200).tools).toEqual([]); // nothing attached

    expectValidation(await api.get('/schema/tools/active'), ['query', 'project_id']);
    expectValidation(await api.get('/schema/tools/active?project_id=12'), ['query', 'project_id']);
    expectError(await api.get('/schema/tools/active?project_id=0190a0b0-0000-7000-8000-0000000000f1'), 404, 'not_found');
  });

  it('a schema change is an event in the log (entity_type Schema.Status) and on the WebSocket, a rename one event with the count', async () => {
    const socket = openEventSocket(e.stack.url, others.at(-1)!.token);
    await socket.opened;
    await ok('POST', '/schema/statuses', { code: 'hold', name: 'On hold', state: 'blocked' });
    await ok('POST', '/schema/statuses/hold/rename', { new_code: 'onhold' });
    const events = await eventually(
      async () => {
        const list = await eventsAfter(api, 0, '&entity_type=Schema.Status');
        return list.some((ev) => ev.changes?.rename?.new_code === 'onhold') ? list : undefined;
      },
      15_000,
      'Schema.Status events',
    );
    const created = events.find((ev) => ev.action === 'create' && ev.changes.code === 'hold');
    expect(created).toMatchObject({ entity_type: 'Schema.Status', project_id: null, actor: admin.user.id });
    expect(created.entity_id).toMatch(/^[0-9a-f-]{36}$/);
    const renames = events.filter((ev) => ev.changes?.rename);
    expect(renames.find((ev) => ev.changes.rename.new_code === 'wip').changes.rename).toMatchObject({ old_code: 'ip', new_code: 'wip', rewritten: 1 });
    expect(renames.filter((ev) => ev.changes.rename.old_code === 'hold')).toHaveLength(1);
    // The live stream carries the same two events, in log order.
    const ids = events.filter((ev) => ev.changes.code === 'hold' || ev.changes.rename?.old_code === 'hold').map((ev) => ev.id);
    await eventually(async () => (ids.every((id) => socket.messages.some((m) => m.id === id)) ? true : undefined), 15_000, 'schema events on the WebSocket');
    const live = socket.messages.filter((m) => ids.includes(m.id));
    expect(live.map((m) => [m.id, m.entity_type])).toEqual(ids.map((id) => [id, 'Schema.Status']));
    await socket.close();
    // A rename is one schema event, not one per record: no Shot event carries the new status.
    const shotEvents = await eventsAfter(api, 0, `&entity_type=Shot`);
    expect(shotEvents.filter((ev) => ev.entity_id === shotId && ev.changes.status === 'wip')).toEqual([]);
  });
});
