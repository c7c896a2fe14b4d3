import { AppError } from '@reelbase/lib-platform';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
  gw.state.failNext.clear();
});

interface Mutation {
  method: string;
  path: string;
  body?: unknown;
  rpc: string;
  /** What the RPC is asked besides the body JSON. */
  codes?: { code?: string; subCode?: string; entityCode?: string };
}

/** Every mutation of the schema surface with a valid body and the call it becomes. */
const MUTATIONS: Mutation[] = [
  { method: 'POST', path: '/schema/entity-types', body: { code: 'Camera', name: 'Camera' }, rpc: 'createEntityType' },
  { method: 'PATCH', path: '/schema/entity-types/Camera', body: { name: 'Cameras' }, rpc: 'renameEntityType', codes: { entityCode: 'Camera' } },
  { method: 'DELETE', path: '/schema/entity-types/Camera', rpc: 'deleteEntityType', codes: { entityCode: 'Camera' } },
  { method: 'POST', path: '/schema/entity-types/Camera/rename-code', body: { new_code: 'Cam' }, rpc: 'renameEntityTypeCode', codes: { code: 'Camera' } },
  {
    method: 'POST',
    path: '/schema/entity-types/Shot/fields',
    body: { code: 'lens', name: 'Lens', type: 'text' },
    rpc: 'createField',
    codes: { entityCode: 'Shot' },
  },
  {
    method: 'PATCH',
    path: '/schema/entity-types/Shot/fields/lens',
    body: { required: true },
    rpc: 'updateField',
    codes: { entityCode: 'Shot', subCode: 'lens' },
  },
  { method: 'DELETE', path: '/schema/entity-types/Shot/fields/lens', rpc: 'deleteField', codes: { entityCode: 'Shot', subCode: 'lens' } },
  {
    method: 'POST',
    path: '/schema/entity-types/Asset/fields/asset_type/rename-option',
    body: { from: 'prop', to: 'props' },
    rpc: 'renameOption',
    codes: { entityCode: 'Asset', subCode: 'asset_type' },
  },
  { method: 'POST', path: '/schema/statuses', body: { code: 'ip', name: 'In progress', state: 'in_progress' }, rpc: 'createStatus' },
  { method: 'PATCH', path: '/schema/statuses/ip', body: { color: '#00ff00' }, rpc: 'updateStatus', codes: { code: 'ip' } },
  { method: 'DELETE', path: '/schema/statuses/ip', rpc: 'deleteStatus', codes: { code: 'ip' } },
  { method: 'DELETE', path: '/schema/statuses/ip?entity_code=Shot', rpc: 'deleteStatus', codes: { code: 'ip', entityCode: 'Shot' } },
  { method: 'POST', path: '/schema/statuses/ip/rename', body: { new_code: 'wip' }, rpc: 'renameStatus', codes: { code: 'ip' } },
  { method: 'POST', path: '/schema/steps', body: { code: 'comp', name: 'Comp' }, rpc: 'createStep' },
  { method: 'POST', path: '/schema/steps/reorder', body: { codes: ['comp', 'anim'] }, rpc: 'reorderSteps' },
  { method: 'PATCH', path: '/schema/steps/comp', body: { name: 'Compositing' }, rpc: 'updateStep', codes: { code: 'comp' } },
  { method: 'DELETE', path: '/schema/steps/comp', rpc: 'deleteStep', codes: { code: 'comp' } },
  { method: 'POST', path: '/schema/steps/comp/rename', body: { new_code: 'cmp' }, rpc: 'renameStep', codes: { code: 'comp' } },
  { method: 'POST', path: '/schema/workflows', body: { code: 'feature', name: 'Feature' }, rpc: 'createWorkflow' },
  { method: 'POST', path: '/schema/workflows/delete', body: { code: 'feature' }, rpc: 'deleteWorkflow', codes: { code: 'feature' } },
  {
    method: 'POST',
    path: '/schema/transitions',
    body: { entity_type: 'Shot', transitions: [{ from: 'wtg', to: ['ip'] }] },
    rpc: 'setTransitions',
    codes: { entityCode: 'Shot' },
  },
  { method: 'PUT', path: '/schema/task-templates', body: { templates: [] }, rpc: 'setTaskTemplates' },
  { method: 'POST', path: '/schema/priorities', body: { code: 'high', name: 'High', rank: 3 }, rpc: 'createPriority' },
  { method: 'PATCH', path: '/schema/priorities/high', body: { rank: 4 }, rpc: 'updatePriority', codes: { code: 'high' } },
  { method: 'DELETE', path: '/schema/priorities/high', rpc: 'deletePriority', codes: { code: 'high' } },
  { method: 'POST', path: '/schema/priorities/high/rename', body: { new_code: 'urgent' }, rpc: 'renamePriority', codes: { code: 'high' } },
  { method: 'PUT', path: '/branding', body: { studio_name: 'Reel' }, rpc: 'setBranding' },
  { method: 'PUT', path: '/schema/applications', body: { applications: [{ code: 'nuke', label: 'Nuke' }] }, rpc: 'setApplications' },
  { method: 'PUT', path: '/schema/tools', body: { tools: [] }, rpc: 'setTools' },
];

const READS: { path: string; rpc: string }[] = [
  { path: '/schema', rpc: 'getSchema' },
  { path: '/schema/usage', rpc: 'getUsage' },
  { path: '/branding', rpc: 'getBranding' },
  { path: '/schema/tools', rpc: 'getTools' },
];

const schemaCalls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');

describe('schema mutations', () => {
  it.each(MUTATIONS.map((m) => [`${m.method} ${m.path}`, m] as const))('%s: 401 without a token', async (_, m) => {
    const r = await call(m.method, m.path, { body: m.body });
    expect(r.status).toBe(401);
    expect(r.json.code).toBe('unauthenticated');
  });

  it.each(MUTATIONS.map((m) => [`${m.method} ${m.path}`, m] as const))('%s: 403 for every role but Admin, before the body is validated', async (_, m) => {
    for (const who of ['supervisor', 'artist', 'viewer', 'svc_artist']) {
      const token = who.startsWith('svc_') ? who : `${who}-token`;
      const good = await call(m.method, m.path, { token, body: m.body });
      expect(good.status, who).toBe(403);
      expect(good.json).toEqual({ detail: expect.any(String), code: 'forbidden' });
      const bad = await call(m.method, m.path, { token, body: { nonsense: true } });
      expect(bad.status, `${who} with a bad body`).toBe(403);
    }
    expect(schemaCalls()).toEqual([]);
  });

  it.each(MUTATIONS.map((m) => [`${m.method} ${m.path}`, m] as const))('%s: an Admin gets the call answered, body and path codes passed on', async (_, m) => {
    const r = await call(m.method, m.path, { token: 'admin-token', body: m.body });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const request = { code: '', subCode: '', entityCode: '', ...m.codes };
    expect(r.json.rpc).toBe(m.rpc);
    expect(r.json.request).toMatchObject(request);
    if (m.body === undefined) expect(r.json.request.bodyJson).toBe('');
    else expect(JSON.parse(r.json.request.bodyJson)).toMatchObject(m.body as object);
    const [only, ...rest] = schemaCalls();
    expect(rest).toEqual([]);
    expect(only!.ctx.principal).toMatchObject({ userId: USERS.admin.id, role: 'Admin' });
  });

  it.each(MUTATIONS.filter((m) => m.body !== undefined).map((m) => [`${m.method} ${m.path}`, m] as const))(
    '%s: unknown keys are a 422 for an Admin',
    async (_, m) => {
      const r = await call(m.method, m.path, { token: 'admin-token', body: { ...(m.body as object), colour: 'red' } });
      expect(r.status).toBe(422);
      expect(r.json.detail).toContainEqual({ loc: ['body', 'colour'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
      expect(schemaCalls()).toEqual([]);
    },
  );

  it('malformed JSON: 403 for a non-Admin, 422 json_invalid for an Admin', async () => {
    const raw = '{"code": "ip",';
    expect((await call('POST', '/schema/statuses', { token: 'artist-token', raw })).status).toBe(403);
    const admin = await call('POST', '/schema/statuses', { token: 'admin-token', raw });
    expect(admin.status).toBe(422);
    expect(admin.json.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
    expect(schemaCalls()).toEqual([]);
  });

  it('routes without a body refuse one', async () => {
    const r = await call('DELETE', '/schema/steps/comp', { token: 'admin-token', body: { force: true } });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ loc: ['body', 'force'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
  });

  it('applies body defaults before passing the body on', async () => {
    const r = await call('POST', '/schema/entity-types', { token: 'admin-token', body: { code: 'Camera', name: 'Camera' } });
    expect(JSON.parse(r.json.request.bodyJson)).toEqual({ code: 'Camera', name: 'Camera', project_scoped: true });
  });
});

describe('schema reads', () => {
  it.each(READS.map((r) => [r.path, r] as const))('GET %s: 401 without a token, any role reads', async (_, read) => {
    expect((await call('GET', read.path)).status).toBe(401);
    for (const token of ['viewer-token', 'artist-token', 'admin-token', 'svc_artist']) {
      const r = await call('GET', read.path, { token });
      expect(r.status, token).toBe(200);
      expect(r.json).toEqual({ rpc: read.rpc, request: { bodyJson: '', code: '', subCode: '', entityCode: '' } });
    }
  });

  it('returns the service JSON as the body, unchanged', async () => {
    const schema =
      '{"entity_types":[{"code":"Shot","fields":[]}],"statuses":[],"steps":[],"priorities":[],"workflows":[],"transitions":{},"task_templates":[]}';
    gw.state.schemaAnswers = new Map([
      ['getSchema', schema],
      ['getBranding', ''],
    ]);
    try {
      const r = await call('GET', '/schema', { token: 'viewer-token' });
      expect(r.text).toBe(schema);
      expect((await call('GET', '/branding', { token: 'viewer-token' })).json).toEqual({});
    } finally {
      gw.state.schemaAnswers = undefined;
    }
  });

  it('GET /schema/applications: project_id and step are optional and passed on', async () => {
    const all = await call('GET', '/schema/applications', { token: 'viewer-token' });
    expect(all.status).toBe(200);
    expect(all.json).toEqual({ rpc: 'getApplications', request: {} });
    const scoped = await call('GET', `/schema/applications?project_id=${PROJECT.toUpperCase()}&step=comp`, { token: 'viewer-token' });
    expect(scoped.json).toEqual({ rpc: 'getApplications', request: { projectId: PROJECT, step: 'comp' } });
    const bad = await call('GET', '/schema/applications?project_id=nope&step=a%2Fb', { token: 'viewer-token' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((p: any) => [p.loc, p.type])).toEqual([
      [['query', 'project_id'], 'uuid_parsing'],
      [['query', 'step'], 'string_pattern_mismatch'],
    ]);
  });

  it('GET /schema/tools/active needs project_id (422 on the query when missing or malformed)', async () => {
    expect((await call('GET', '/schema/tools/active')).status).toBe(401);
    const missing = await call('GET', '/schema/tools/active?step=comp', { token: 'viewer-token' });
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([{ loc: ['query', 'project_id'], msg: 'Field required', type: 'missing' }]);
    const malformed = await call('GET', '/schema/tools/active?project_id=12', { token: 'viewer-token' });
    expect(malformed.json.detail).toEqual([{ loc: ['query', 'project_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
    expect(schemaCalls()).toEqual([]);
    const ok = await call('GET', `/schema/tools/active?project_id=${PROJECT}&step=comp`, { token: 'artist-token' });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ rpc: 'getActiveTools', request: { projectId: PROJECT, step: 'comp' } });
  });
});

describe('validation problems name where they are', () => {
  it('body, path and query locations', async () => {
    const body = await call('POST', '/schema/statuses', { token: 'admin-token', body: { code: 'in progress', name: 'x', entity_types: ['shot'] } });
    expect(body.status).toBe(422);
    expect(body.json.detail.map((p: any) => [p.loc, p.type])).toEqual([
      [['body', 'code'], 'string_pattern_mismatch'],
      [['body', 'state'], 'missing'],
      [['body', 'entity_types', 0], 'string_pattern_mismatch'],
    ]);
    const path = await call('PATCH', '/schema/entity-types/shot/fields/Lens', { token: 'admin-token', body: {} });
    expect(path.json.detail.map((p: any) => p.loc)).toEqual([
      ['path', 'entity_code'],
      ['path', 'field_code'],
    ]);
    const query = await call('DELETE', '/schema/statuses/ip?entity_code=shot', { token: 'admin-token' });
    expect(query.json.detail.map((p: any) => p.loc)).toEqual([['query', 'entity_code']]);
  });

  it("the service's own problems get their source too", async () => {
    gw.state.failNext.set('reorderSteps', AppError.invalid([{ loc: ['codes'], msg: 'not every step is listed: anim', type: 'value_error' }]));
    const r = await call('POST', '/schema/steps/reorder', { token: 'admin-token', body: { codes: ['comp'] } });
    expect(r.status).toBe(422);
    expect(r.json.detail).toEqual([{ loc: ['body', 'codes'], msg: 'not every step is listed: anim', type: 'value_error' }]);
    gw.state.failNext.set('getActiveTools', AppError.invalid([{ loc: ['project_id'], msg: 'not a Project', type: 'value_error' }]));
    const q = await call('GET', `/schema/tools/active?project_id=${PROJECT}`, { token: 'admin-token' });
    expect(q.json.detail).toEqual([{ loc: ['query', 'project_id'], msg: 'not a Project', type: 'value_error' }]);
  });
});

describe('answers of the schema service', () => {
  it('404 and the 409 codes, with usage for code_in_use', async () => {
    gw.state.failNext.set('renameEntityType', AppError.notFound('no entity type Camera'));
    const nf = await call('PATCH', '/schema/entity-types/Camera', { token: 'admin-token', body: { name: 'x' } });
    expect(nf.status).toBe(404);
    expect(nf.json).toEqual({ detail: 'no entity type Camera', code: 'not_found' });

    gw.state.failNext.set('createStatus', AppError.conflict('duplicate_code', 'status ip exists'));
    const dup = await call('POST', '/schema/statuses', { token: 'admin-token', body: { code: 'ip', name: 'x', state: 'done' } });
    expect(dup.status).toBe(409);
    expect(dup.json).toEqual({ detail: 'status ip exists', code: 'duplicate_code' });

    gw.state.failNext.set('deleteEntityType', AppError.conflict('builtin', 'Shot is built in'));
    const builtin = await call('DELETE', '/schema/entity-types/Shot', { token: 'admin-token' });
    expect(builtin.json).toEqual({ detail: 'Shot is built in', code: 'builtin' });

    gw.state.failNext.set('deleteStatus', AppError.conflict('code_in_use', 'ip is used by 3 records', { usage: 3 }));
    const used = await call('DELETE', '/schema/statuses/ip', { token: 'admin-token' });
    expect(used.status).toBe(409);
    expect(used.json).toEqual({ detail: 'ip is used by 3 records', code: 'code_in_use', usage: 3 });
  });

  it('503 when the schema service is down', async () => {
    gw.state.down.add('schema');
    const r = await call('GET', '/schema', { token: 'viewer-token' });
    expect(r.status).toBe(503);
    expect(r.json.code).toBe('unavailable');
  });
});

describe('schema events in the log', () => {
  it('GET /events filters by a schema change kind (Schema.Status) as by an entity type', async () => {
    const r = await call('GET', '/events?entity_type=Schema.Status&limit=5', { token: 'viewer-token' });
    expect(r.status).toBe(200);
    expect(gw.state.calls.find((c) => c.method === 'listEvents')!.req).toMatchObject({ entityType: 'Schema.Status' });
    for (const bad of ['Schema.', 'schema.Status', 'Schema.Status.x', 'Other.Status']) {
      const refused = await call('GET', `/events?entity_type=${encodeURIComponent(bad)}`, { token: 'viewer-token' });
      expect(refused.status, bad).toBe(422);
      expect(refused.json.detail[0].loc).toEqual(['query', 'entity_type']);
    }
  });
});
