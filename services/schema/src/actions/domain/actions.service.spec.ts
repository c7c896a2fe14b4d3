import { AppError, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { configDigest } from '../../kernel/domain/config.events.js';
import { emptyDoc, type SchemaDoc } from '../../definitions/domain/schema.types.js';
import type { ActionDeliveryRequest, ActionRecord, ActionStore, NewLaunch } from './actions.ports.js';
import type { CustomAction, LaunchPayload } from './actions.rules.js';
import { ActionsService, tokenHash } from './actions.service.js';

const P = '0190a000-0000-7000-8000-000000000001';
const P2 = '0190a000-0000-7000-8000-000000000002';
const SHOT = '0190a000-0000-7000-8000-000000000010';
const SHOT2 = '0190a000-0000-7000-8000-000000000011';
const OTHER_SHOT = '0190a000-0000-7000-8000-000000000012';
const ASSET = '0190a000-0000-7000-8000-000000000020';
const TASK = '0190a000-0000-7000-8000-000000000030';
const USER = '0190a000-0000-7000-8000-000000000040';
const ADMIN = '0190a000-0000-7000-8000-000000000041';
const MISSING = '0190a000-0000-7000-8000-000000000099';

const as = (userId: string, role: string): CallContext => ({ requestId: 'r', principal: { userId, role: role as 'Admin', authKind: 'token' } });

/**
 * `hidden`: a restricted project and the user who may not read it. The records port answers as
 * records does, by the caller of each call: that user never finds the project or anything in it.
 */
function world(hidden?: { userId: string; projectId: string }) {
  const records: ActionRecord[] = [
    { id: P, entityType: 'Project', projectId: null, data: { code: 'DEMO', name: 'Demo', overrides: { applicationsByStep: { comp: ['nuke'] } } } },
    { id: P2, entityType: 'Project', projectId: null, data: { code: 'OTHER' } },
    { id: SHOT, entityType: 'Shot', projectId: P, data: { code: 'SH010' } },
    { id: SHOT2, entityType: 'Shot', projectId: P, data: { code: 'SH020' } },
    { id: OTHER_SHOT, entityType: 'Shot', projectId: P2, data: { code: 'X' } },
    { id: ASSET, entityType: 'Asset', projectId: P, data: { code: 'chair' } },
    { id: TASK, entityType: 'Task', projectId: P, data: { name: 'Comp', step: 'comp', entity: { type: 'Shot', id: SHOT } } },
    { id: USER, entityType: 'User', projectId: null, data: { name: 'Ana Silva' } },
  ];
  const doc: SchemaDoc = {
    ...emptyDoc(),
    entity_types: ['Project', 'Shot', 'Asset', 'Task', 'User'].map((code) => ({
      code,
      name: code,
      description: '',
      builtin: true,
      project_scoped: true,
      fields: [],
    })),
    applications: [
      { code: 'maya', label: 'Maya', group: null, version: '2025', icon: null, executables: {}, args: [], environment: {} },
      { code: 'nuke', label: 'Nuke', group: null, version: '15', icon: null, executables: {}, args: [], environment: {} },
    ],
  };
  let custom: CustomAction[] = [
    { id: 'publish', label: 'Publish', url: 'https://h.example.com/p', entity_types: ['Shot'], roles: null, icon: null, secret: 's'.repeat(16) },
    { id: 'approve', label: 'Approve', url: 'https://h.example.com/a', entity_types: ['Shot'], roles: ['Supervisor'], icon: null, secret: null },
  ];
  const readable = (r: ActionRecord, ctx: CallContext) =>
    !hidden || ctx.principal?.userId !== hidden.userId || (r.entityType === 'Project' ? r.id : r.projectId) !== hidden.projectId;
  const events: StreamEvent[] = [];
  const launches = new Map<string, NewLaunch>();
  const deliveries: ActionDeliveryRequest[] = [];
  const store: ActionStore = {
    customActions: async () => custom,
    replaceCustomActions: async (list, event) => {
      custom = list.map((a) => ({ ...a, secret: a.secret === undefined ? (custom.find((c) => c.id === a.id)?.secret ?? null) : a.secret }));
      events.push(event(custom));
      return custom;
    },
    createLaunch: async (l, e) => {
      launches.set(l.tokenHash, l);
      events.push(e);
      return '2026-01-01T00:10:00.000000Z';
    },
    takeLaunch: async (hash, userId) => {
      const l = launches.get(hash);
      if (!l || l.userId !== userId) return null;
      launches.delete(hash);
      return l.payload as LaunchPayload;
    },
    recordEvent: async (e) => void events.push(e),
  };
  const service = new ActionsService({
    store,
    records: {
      find: async (type, id, ctx) => records.find((r) => r.entityType === type && r.id === id && readable(r, ctx)) ?? null,
      many: async (type, ids, ctx) => records.filter((r) => r.entityType === type && ids.includes(r.id) && readable(r, ctx)),
    },
    deliveries: { enqueue: async (d) => (deliveries.push(d), d.deliveryId) },
    schema: async () => doc,
    digest: configDigest(Buffer.alloc(32, 7)),
  });
  return { service, events, deliveries, launches, custom: () => custom };
}

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

const sel = (entityType: string, ...entityIds: string[]) => ({ projectId: P, entityType, entityIds });

describe('ActionsService', () => {
  it('lists launch actions narrowed by the Task step, and custom actions by type and role', async () => {
    const { service } = world();
    const ids = async (s: ReturnType<typeof sel>, role = 'Artist') => (await service.list(s, as(USER, role))).items.map((i) => i.id);
    expect(await ids(sel('Shot', SHOT))).toEqual(['launch:maya', 'launch:nuke', 'publish']);
    expect(await ids(sel('Shot', SHOT), 'Supervisor')).toEqual(['launch:maya', 'launch:nuke', 'publish', 'approve']);
    expect(await ids(sel('Task', TASK))).toEqual(['launch:nuke']);
    expect(await ids(sel('Shot', SHOT, SHOT2))).toEqual(['publish']);
  });

  it('answers 404 for a missing project or record and 422 for a record of another type or project', async () => {
    const { service } = world();
    const ctx = as(USER, 'Artist');
    expect((await failure(service.list({ ...sel('Shot', SHOT), projectId: MISSING }, ctx))).kind).toBe('not_found');
    expect((await failure(service.list(sel('Shot', SHOT, MISSING), ctx))).kind).toBe('not_found');
    const wrong = await failure(service.list(sel('Shot', SHOT, ASSET, OTHER_SHOT), ctx));
    expect(wrong.kind).toBe('invalid');
    expect(wrong.problems?.map((p) => p.loc)).toEqual([
      ['body', 'entity_ids', 1],
      ['body', 'entity_ids', 2],
    ]);
    const bad = await failure(service.list({ projectId: 'x', entityType: 'shot', entityIds: [] }, ctx));
    expect(bad.problems?.map((p) => p.loc)).toEqual([
      ['body', 'project_id'],
      ['body', 'entity_type'],
      ['body', 'entity_ids'],
    ]);
  });

  it('reads the project and records as the caller: one in a project records hides from them is 404, never 422', async () => {
    const { service, events } = world({ userId: USER, projectId: P2 });
    const ctx = as(USER, 'Artist');
    expect((await failure(service.list({ ...sel('Shot', OTHER_SHOT), projectId: P2 }, ctx))).kind).toBe('not_found');
    expect((await failure(service.execute({ ...sel('Shot', OTHER_SHOT), projectId: P2, actionId: 'publish' }, ctx))).kind).toBe('not_found');
    // Named beside a record of a readable project it is missing, not "of another project".
    const mixed = await failure(service.list(sel('Shot', SHOT, OTHER_SHOT), ctx));
    expect(mixed.kind).toBe('not_found');
    expect(mixed.message).toContain(OTHER_SHOT);
    expect(events).toHaveLength(0);
    // Whoever records lets read it sees the usual answers.
    const admin = as(ADMIN, 'Admin');
    expect((await service.list({ ...sel('Shot', OTHER_SHOT), projectId: P2 }, admin)).items.map((i) => i.id)).toContain('publish');
    expect((await failure(service.list(sel('Shot', SHOT, OTHER_SHOT), admin))).kind).toBe('invalid');
  });

  it('executes only an action listed for the caller and context (404 otherwise); a launch with >1 record is 422', async () => {
    const { service, events } = world();
    const ctx = as(USER, 'Artist');
    expect((await failure(service.execute({ ...sel('Shot', SHOT), actionId: 'approve' }, ctx))).kind).toBe('not_found');
    expect((await failure(service.execute({ ...sel('Task', TASK), actionId: 'launch:maya' }, ctx))).kind).toBe('not_found');
    expect((await failure(service.execute({ ...sel('Shot', SHOT), actionId: 'nope' }, ctx))).kind).toBe('not_found');
    const many = await failure(service.execute({ ...sel('Shot', SHOT, SHOT2), actionId: 'launch:maya' }, ctx));
    expect(many.kind).toBe('invalid');
    expect(many.problems?.map((p) => p.loc)).toEqual([['body', 'entity_ids']]);
    expect(events).toHaveLength(0);
  });

  it('a launch is a one-time request of its user with the task context, and an Action event', async () => {
    const { service, events } = world();
    const out = await service.execute({ ...sel('Task', TASK), actionId: 'launch:nuke' }, as(USER, 'Artist'));
    if (out.kind !== 'launch') throw new Error('expected a launch');
    expect(Buffer.from(out.token, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(tokenHash(out.token)).not.toContain(out.token);
    expect((await failure(service.takeLaunch(out.token, as(ADMIN, 'Admin')))).kind).toBe('not_found');
    const payload = await service.takeLaunch(out.token, as(USER, 'Artist'));
    expect(payload.context).toEqual({
      project: { id: P, code: 'DEMO', name: 'Demo' },
      entity: { type: 'Shot', id: SHOT, code: 'SH010' },
      task: { id: TASK, name: 'Comp', step: 'comp' },
    });
    expect((await failure(service.takeLaunch(out.token, as(USER, 'Artist')))).kind).toBe('not_found');
    expect(events).toEqual([
      expect.objectContaining({
        entity_type: 'Action',
        action: 'create',
        actor: USER,
        project_id: P,
        changes: { action_id: 'launch:nuke', kind: 'launch', entity_type: 'Task', entity_ids: [TASK] },
      }),
    ]);
  });

  it('a webhook action is queued with its url, secret and body, and is an Action event', async () => {
    const { service, events, deliveries } = world();
    const out = await service.execute({ ...sel('Shot', SHOT, SHOT2), actionId: 'publish' }, as(USER, 'Artist'));
    expect(out).toEqual({ kind: 'webhook', delivery_id: deliveries[0]!.deliveryId });
    expect(deliveries[0]).toMatchObject({ actionId: 'publish', url: 'https://h.example.com/p', secret: 's'.repeat(16) });
    const body = JSON.parse(deliveries[0]!.body) as Record<string, unknown>;
    expect(body).toEqual({
      action_id: 'publish',
      user: { id: USER, name: 'Ana Silva' },
      project_id: P,
      entity_type: 'Shot',
      entity_ids: [SHOT, SHOT2],
      requested_at: expect.any(String),
    });
    expect(events[0]).toMatchObject({ entity_type: 'Action', entity_id: out.kind === 'webhook' ? out.delivery_id : '', changes: { kind: 'webhook' } });
  });

  it('the custom action list is for Admins, answers has_secret, and keeps a secret left out', async () => {
    const { service, custom } = world();
    expect((await failure(service.getCustomActions(as(USER, 'Supervisor')))).kind).toBe('forbidden');
    expect((await failure(service.putCustomActions('{"actions":[]}', as(USER, 'Supervisor')))).kind).toBe('forbidden');
    const got = await service.getCustomActions(as(ADMIN, 'Admin'));
    expect(got.actions[0]).toEqual({
      id: 'publish',
      label: 'Publish',
      url: 'https://h.example.com/p',
      entity_types: ['Shot'],
      roles: null,
      icon: null,
      has_secret: true,
    });
    expect(JSON.stringify(got)).not.toContain('s'.repeat(16));
    const put = await service.putCustomActions(
      JSON.stringify({ actions: [{ id: 'publish', label: 'Publish v2', url: 'https://h.example.com/p2', entity_types: ['Shot'] }] }),
      as(ADMIN, 'Admin'),
    );
    expect(put.actions[0]).toMatchObject({ label: 'Publish v2', has_secret: true });
    expect(custom()[0]!.secret).toBe('s'.repeat(16));
    const bad = await failure(
      service.putCustomActions(
        JSON.stringify({
          actions: [
            { id: 'a', label: 'A', url: 'ftp://x', entity_types: ['Shot'], roles: ['Boss'], typo: 1 },
            { id: 'a', label: 'A', url: 'https://x.example.com', entity_types: ['Shot'] },
          ],
        }),
        as(ADMIN, 'Admin'),
      ),
    );
    expect(bad.problems?.map((p) => p.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'actions', 0, 'typo'],
        ['body', 'actions', 0, 'url'],
        ['body', 'actions', 0, 'roles', 0],
        ['body', 'actions', 1, 'id'],
      ]),
    );
  });

  it('the Schema.Actions event shows every role no URL and no secret: has_url, has_secret and a digest that moves with them', async () => {
    const { service, events } = world();
    const admin = as(ADMIN, 'Admin');
    const url = 'https://hooks.chat.example/T0/B0/xoxb-recognisable-token';
    const secret = 'a-recognisable-secret-value';
    const put = (body: unknown) => service.putCustomActions(JSON.stringify({ actions: [body] }), admin);
    const base = { id: 'publish', label: 'Publish', url, entity_types: ['Shot'], secret };
    await put(base);
    await put({ ...base, secret: undefined }); // the secret kept, nothing else changed: the same digest
    await put({ ...base, secret: 'another-recognisable-secret' });
    await put({ ...base, secret: 'another-recognisable-secret', url: 'https://hooks.chat.example/T0/B0/xoxb-other-token' });
    const shown = events.filter((e) => e.entity_type === 'Schema.Actions').map((e) => (e.changes.actions as Record<string, unknown>[])[0]!);
    expect(shown).toHaveLength(4);
    for (const a of shown) {
      expect(Object.keys(a).sort()).toEqual(['digest', 'entity_types', 'has_secret', 'has_url', 'icon', 'id', 'label', 'roles']);
      expect(a).toMatchObject({
        id: 'publish',
        label: 'Publish',
        entity_types: ['Shot'],
        has_url: true,
        has_secret: true,
        digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    }
    const text = JSON.stringify(events);
    for (const hidden of ['xoxb-recognisable-token', 'xoxb-other-token', 'hooks.chat.example', secret, 'another-recognisable-secret']) {
      expect(text).not.toContain(hidden);
    }
    const digests = shown.map((a) => a.digest);
    expect(digests[1]).toBe(digests[0]);
    expect(new Set([digests[0], digests[2], digests[3]]).size).toBe(3);
    // The Admin's own read still answers the URL.
    expect((await service.getCustomActions(admin)).actions[0]!.url).toBe('https://hooks.chat.example/T0/B0/xoxb-other-token');
  });
});
