/**
 * Actions against the whole stack (docs/api-notes.md, "Actions"): launch actions narrowed by the
 * project's overrides and a Task's step, listed for exactly one record; custom actions by entity
 * type and role (the list Admin only, secrets never answered); 404 and 422 for the records and
 * actions that do not fit; a launch request taken once by its user only (another user's attempt
 * does not use it up), refused once 10 minutes are over (time moved in SQL), with the merged
 * environment and the task context; a signed webhook action delivered to a local HTTP target and
 * retried after a 500; and an `Action` event for each execute.
 */
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '@reelbase/lib-testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError } from './support/expect.helpers.js';

const NOTIFIER_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '400',
  WEBHOOK_RETRY_WINDOW_MS: '120000',
  WEBHOOK_TIMEOUT_MS: '1500',
  NOTIFIER_POLL_MS: '200',
};

const SECRET = 'an-action-secret-of-32-characters';

describe('actions (whole stack)', () => {
  let e: E2EStack;
  let rx: WebhookReceiver;
  let admin: Session;
  let ana: Session;
  let bo: Session;
  let projectId: string;
  let otherProjectId: string;
  let shot: any;
  let shot2: any;
  let otherShot: any;
  let asset: any;
  let compTask: any;
  let animTask: any;
  const link = (r: any) => ({ type: r.entity_type, id: r.id });
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const list = (s: Session, entityType: string, ids: string[], project = projectId) =>
    s.api.post('/actions/list', { project_id: project, entity_type: entityType, entity_ids: ids });
  const ids = async (s: Session, entityType: string, recordIds: string[]) =>
    (expectStatus(await list(s, entityType, recordIds), 200, 'POST /actions/list').items as any[]).map((i) => i.id);
  const execute = (s: Session, actionId: string, entityType: string, recordIds: string[]) =>
    s.api.post('/actions/execute', { action_id: actionId, project_id: projectId, entity_type: entityType, entity_ids: recordIds });
  const sql = async (text: string, params: unknown[] = []) => {
    const db = new pg.Client({ connectionString: e.db.url });
    await db.connect();
    try {
      return (await db.query(text, params)).rows;
    } finally {
      await db.end();
    }
  };

  beforeAll(async () => {
    rx = await startWebhookReceiver({ keepBodies: true });
    e = await startE2EStack('actions', { notifier: NOTIFIER_ENV });
    admin = await bootstrapAdmin(e.api);
    ana = await createUser(admin.api, 'Artist', 'ana@studio.test');
    bo = await createUser(admin.api, 'Supervisor', 'bo@studio.test');
    for (const code of ['comp', 'anim']) expectStatus(await admin.api.post('/schema/steps', { code, name: code }), 200, `step ${code}`);
    expectStatus(
      await admin.api.call('PUT', '/schema/applications', {
        body: {
          applications: [
            {
              code: 'maya2025',
              label: 'Maya 2025',
              group: 'maya',
              version: '2025',
              icon: 'maya',
              executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
              args: ['-noAutoloadPlugins'],
              environment: { MAYA_MODULE_PATH: '/studio/maya/modules', STUDIO: 'demo' },
            },
            { code: 'nuke15', label: 'Nuke 15.1', group: 'nuke', version: '15.1', environment: { NUKE_PATH: '/studio/nuke' } },
            { code: 'blender', label: 'Blender' },
          ],
        },
      }),
      200,
      'PUT /schema/applications',
    );
    const overrides = {
      applications: ['maya2025', 'nuke15'],
      applicationsByStep: { comp: ['nuke15'] },
      tools: ['mtoa/5.4.5', 'yeti/4.2.11'],
      toolsByStep: { comp: [] },
    };
    projectId = (await create(admin.api, 'Project', { data: { name: 'Actions', code: 'act', overrides } })).id;
    otherProjectId = (await create(admin.api, 'Project', { data: { name: 'Other', code: 'oth' } })).id;
    shot = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh010' } });
    shot2 = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh020' } });
    otherShot = await create(admin.api, 'Shot', { project_id: otherProjectId, data: { code: 'sh999' } });
    asset = await create(admin.api, 'Asset', { project_id: projectId, data: { code: 'chair' } });
    compTask = await create(admin.api, 'Task', { project_id: projectId, data: { name: 'Comp', step: 'comp', entity: link(shot) } });
    animTask = await create(admin.api, 'Task', { project_id: projectId, data: { name: 'Anim', step: 'anim', entity: link(shot) } });
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
    await rx?.close();
  });

  it('keeps the custom action list to Admins and never answers a secret', async () => {
    const body = {
      actions: [
        { id: 'publish', label: 'Publish', url: rx.target('publish'), entity_types: ['Shot'], secret: SECRET, icon: 'upload' },
        { id: 'approve', label: 'Approve', url: rx.target('approve'), entity_types: ['Shot', 'Task'], roles: ['Supervisor', 'Admin'] },
      ],
    };
    expectError(await ana.api.call('PUT', '/actions/custom', { body }), 403, 'forbidden');
    expectError(await bo.api.get('/actions/custom'), 403, 'forbidden');
    const put = expectStatus(await admin.api.call('PUT', '/actions/custom', { body }), 200, 'PUT /actions/custom');
    expect(JSON.stringify(put)).not.toContain(SECRET);
    expect(expectStatus(await admin.api.get('/actions/custom'), 200, 'GET /actions/custom')).toEqual({
      actions: [
        { id: 'publish', label: 'Publish', url: rx.target('publish'), entity_types: ['Shot'], roles: null, icon: 'upload', has_secret: true },
        {
          id: 'approve',
          label: 'Approve',
          url: rx.target('approve'),
          entity_types: ['Shot', 'Task'],
          roles: ['Supervisor', 'Admin'],
          icon: null,
          has_secret: false,
        },
      ],
    });
  });

  it('lists launch actions per project override and Task step, one record only, then custom actions by type and role', async () => {
    const items = expectStatus(await list(ana, 'Shot', [shot.id]), 200, 'list').items;
    expect(items).toEqual([
      { id: 'launch:maya2025', kind: 'launch', label: 'Maya 2025', app: 'maya', variant: '2025', icon: 'maya', group: 'maya', order: 0 },
      { id: 'launch:nuke15', kind: 'launch', label: 'Nuke 15.1', app: 'nuke', variant: '15.1', group: 'nuke', order: 1 },
      { id: 'publish', kind: 'webhook', label: 'Publish', icon: 'upload', order: 2 },
    ]);
    expect(await ids(bo, 'Shot', [shot.id])).toEqual(['launch:maya2025', 'launch:nuke15', 'publish', 'approve']);
    expect(await ids(ana, 'Task', [compTask.id])).toEqual(['launch:nuke15']);
    expect(await ids(bo, 'Task', [animTask.id])).toEqual(['launch:maya2025', 'launch:nuke15', 'approve']);
    expect(await ids(ana, 'Shot', [shot.id, shot2.id])).toEqual(['publish']);
    expect(await ids(ana, 'Asset', [asset.id])).toEqual(['launch:maya2025', 'launch:nuke15']);
  });

  it('answers 404 for a missing project or record and 422 for a record of another type or project', async () => {
    expectError(await list(ana, 'Shot', [shot.id], '0190a0b0-0000-7000-8000-00000000dead'), 404, 'not_found');
    expectError(await list(ana, 'Shot', [shot.id, '0190a0b0-0000-7000-8000-00000000beef']), 404, 'not_found');
    const wrong = await list(ana, 'Shot', [shot.id, asset.id, otherShot.id]);
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body.detail.map((d: any) => d.loc)).toEqual([
      ['body', 'entity_ids', 1],
      ['body', 'entity_ids', 2],
    ]);
  });

  it('refuses an action not listed for the caller and context (404) and a launch on several records (422)', async () => {
    expectError(await execute(ana, 'approve', 'Shot', [shot.id]), 404, 'not_found');
    expectError(await execute(ana, 'launch:maya2025', 'Task', [compTask.id]), 404, 'not_found');
    expectError(await execute(ana, 'launch:blender', 'Shot', [shot.id]), 404, 'not_found');
    const many = await execute(ana, 'launch:maya2025', 'Shot', [shot.id, shot2.id]);
    expect(many.status, many.text).toBe(422);
    expect(many.body.detail.map((d: any) => d.loc)).toEqual([['body', 'entity_ids']]);
  });

  it('a launch request is taken once, by its user only, with the merged environment and the task context', async () => {
    const out = expectStatus(await execute(ana, 'launch:maya2025', 'Task', [animTask.id]), 200, 'execute launch');
    expect(out).toEqual({ kind: 'launch', token: expect.any(String), expires_at: expect.any(String), uri: expect.any(String) });
    expect(Buffer.from(out.token, 'base64url').length).toBeGreaterThanOrEqual(16);
    const uri = new URL(out.uri);
    expect(`${uri.protocol}//${uri.host}${uri.pathname}`).toBe('reelbase-launcher://launch');
    expect(uri.searchParams.get('token')).toBe(out.token);
    expect(uri.searchParams.get('server')).toBe(e.stack.url);
    const ttl = Date.parse(out.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(9 * 60_000);
    expect(ttl).toBeLessThanOrEqual(10 * 60_000 + 5_000);
    // Stored hashed.
    const stored = await sql('select token_hash from schema.launch_request');
    expect(stored.map((r) => r.token_hash)).not.toContain(out.token);

    expectError(await bo.api.get(`/actions/launch/${out.token}`), 404, 'not_found');
    expectError(await admin.api.get(`/actions/launch/${out.token}`), 404, 'not_found');
    const payload = expectStatus(await ana.api.get(`/actions/launch/${out.token}`), 200, 'GET /actions/launch');
    expect(payload).toEqual({
      app: 'maya',
      variant: '2025',
      label: 'Maya 2025',
      executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
      args: ['-noAutoloadPlugins'],
      environment: {
        MAYA_MODULE_PATH: '/studio/maya/modules:/opt/autodesk/arnold/maya2025:/opt/peregrinelabs/yeti-4.2.11',
        STUDIO: 'demo',
        ARNOLD_CORE_VERSION: '7.3.5.0',
        YETI_HOME: '/opt/peregrinelabs/yeti-4.2.11',
      },
      tools: [
        { tool: 'mtoa', label: 'Arnold for Maya (MtoA)', version: '5.4.5' },
        { tool: 'yeti', label: 'Yeti', version: '4.2.11' },
      ],
      context: {
        project: { id: projectId, code: 'act', name: 'Actions' },
        entity: { type: 'Shot', id: shot.id, code: 'sh010' },
        task: { id: animTask.id, name: 'Anim', step: 'anim' },
      },
    });
    expectError(await ana.api.get(`/actions/launch/${out.token}`), 404, 'not_found');

    // The comp step attaches no tools (`toolsByStep.comp` is empty).
    const comp = expectStatus(await execute(ana, 'launch:nuke15', 'Task', [compTask.id]), 200, 'execute comp');
    const compPayload = expectStatus(await ana.api.get(`/actions/launch/${comp.token}`), 200, 'comp payload');
    expect(compPayload).toMatchObject({ app: 'nuke', variant: '15.1', tools: [], environment: { NUKE_PATH: '/studio/nuke' }, args: [] });
  });

  it('a launch request is refused once its 10 minutes are over', async () => {
    const out = expectStatus(await execute(ana, 'launch:nuke15', 'Shot', [shot.id]), 200, 'execute launch');
    await sql("update schema.launch_request set expires_at = now() - interval '1 second'");
    expectError(await ana.api.get(`/actions/launch/${out.token}`), 404, 'not_found');
  });

  it('a webhook action is delivered signed, retried after a 500, and every execute is an Action event', async () => {
    rx.setMode('publish', { kind: 'fail', status: 500 });
    const started = Date.now();
    const out = expectStatus(await execute(ana, 'publish', 'Shot', [shot.id, shot2.id]), 200, 'execute publish');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(out).toEqual({ kind: 'webhook', delivery_id: expect.any(String) });
    await rx.waitFor(() => rx.requests('publish').some((r) => r.answered === 500), 20_000, 'a failed attempt');
    rx.setMode('publish', { kind: 'ok' });
    await rx.waitFor(() => rx.delivered('publish').length >= 1, 20_000, 'the delivery after the retry');
    const attempts = rx.requests('publish');
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    const delivered = rx.delivered('publish')[0]!;
    expect(verifySignature(SECRET, delivered.body, delivered.headers['x-signature'])).toBe(true);
    expect(attempts.every((a) => a.body === delivered.body)).toBe(true);
    expect(delivered.headers['x-delivery-id']).toBe(out.delivery_id);
    expect(delivered.headers['x-action-id']).toBe('publish');
    expect(JSON.parse(delivered.body)).toEqual({
      action_id: 'publish',
      user: { id: ana.user.id, name: 'Artist User' },
      project_id: projectId,
      entity_type: 'Shot',
      entity_ids: [shot.id, shot2.id],
      requested_at: expect.any(String),
    });

    const events = await eventually(
      async () => {
        const evs = await eventsAfter(admin.api, 0, '&entity_type=Action');
        return evs.some((ev) => ev.entity_id === out.delivery_id) ? evs : undefined;
      },
      20_000,
      'the Action events',
    );
    expect(events.length).toBe(4);
    expect(events.find((ev) => ev.entity_id === out.delivery_id)).toMatchObject({
      entity_type: 'Action',
      action: 'create',
      project_id: projectId,
      actor: ana.user.id,
      changes: { action_id: 'publish', kind: 'webhook', entity_type: 'Shot', entity_ids: [shot.id, shot2.id] },
    });
    expect(events.map((ev) => ev.changes.action_id)).toEqual(['launch:maya2025', 'launch:nuke15', 'launch:nuke15', 'publish']);
  });
});
