/**
 * The actions' store against the real PostgreSQL (migration schema-0002-actions), driven through
 * the actions' use cases with records and the notifier stood in: a launch request is taken once,
 * by its user only (another user's attempt does not use it up), not after 10 minutes (time moved
 * in SQL); custom action secrets are sealed at rest, kept when left out and never answered; every
 * execute and every list change writes its event to the schema outbox, the list's without URLs or
 * secrets.
 */
import { createLogger, natsNames, newId, openOrm, SecretCipher, type CallContext } from '@reelbase/lib-platform';
import { createTestDatabase, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionDeliveryRequest, ActionRecord } from '../src/actions/domain/actions.ports.js';
import { ActionsService } from '../src/actions/domain/actions.service.js';
import { configDigest } from '../src/kernel/domain/config.events.js';
import { emptyDoc, type SchemaDoc } from '../src/definitions/domain/schema.types.js';
import { ActionRepository } from '../src/actions/store/actions.repository.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from '../src/migrations.js';

const P = newId();
const SHOT = newId();
const ANA = newId();
const BEN = newId();
const as = (userId: string, role = 'Artist'): CallContext => ({ requestId: newId(), principal: { userId, role: role as 'Artist', authKind: 'token' } });

const records: ActionRecord[] = [
  { id: P, entityType: 'Project', projectId: null, data: { code: 'DEMO', name: 'Demo', overrides: { tools: ['mtoa/5.4.5', 'yeti/4.2.11'] } } },
  { id: SHOT, entityType: 'Shot', projectId: P, data: { code: 'SH010' } },
  { id: ANA, entityType: 'User', projectId: null, data: { name: 'Ana' } },
];
const doc: SchemaDoc = {
  ...emptyDoc(),
  entity_types: ['Project', 'Shot', 'User'].map((code) => ({ code, name: code, description: '', builtin: true, project_scoped: code === 'Shot', fields: [] })),
  applications: [
    {
      code: 'maya2025',
      label: 'Maya 2025',
      group: 'maya',
      version: '2025',
      icon: null,
      executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
      args: ['-noAutoloadPlugins'],
      environment: { MAYA_MODULE_PATH: '/studio/modules' },
    },
  ],
};

let db: TestDatabase;
let orm: MikroORM;
let service: ActionsService;
const deliveries: ActionDeliveryRequest[] = [];

async function sql<R>(text: string, params: unknown[] = []): Promise<R[]> {
  const res = await orm.em
    .getConnection()
    .getKnex()
    .raw<{ rows: R[] }>(text, params as never);
  return res.rows;
}

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm({ clientUrl: db.url, schema: SCHEMA_SCHEMA, entities: [], migrations: SCHEMA_MIGRATIONS, logger: createLogger('schema', 'silent') });
  service = new ActionsService({
    store: new ActionRepository(orm.em.getConnection().getKnex(), natsNames(''), new SecretCipher(TEST_SECRETS_KEY)),
    records: {
      find: async (type, id) => records.find((r) => r.entityType === type && r.id === id) ?? null,
      many: async (type, ids) => records.filter((r) => r.entityType === type && ids.includes(r.id)),
    },
    deliveries: { enqueue: async (d) => (deliveries.push(d), d.deliveryId) },
    schema: async () => doc,
    digest: configDigest(Buffer.alloc(32, 5)),
  });
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

const launch = async (user = ANA) => {
  const out = await service.execute({ actionId: 'launch:maya2025', projectId: P, entityType: 'Shot', entityIds: [SHOT] }, as(user));
  if (out.kind !== 'launch') throw new Error('expected a launch');
  return out;
};

describe('launch requests', () => {
  it('are stored hashed, expire 10 minutes after the execute, and are taken once by their user only', async () => {
    const out = await launch();
    const rows = await sql<{ token_hash: string; user_id: string; ttl: number }>(
      'select token_hash, user_id, extract(epoch from expires_at - created_at)::int as ttl from schema.launch_request',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).not.toContain(out.token);
    expect(rows[0]!.ttl).toBe(600);
    expect(Date.parse(out.expires_at) - Date.now()).toBeGreaterThan(590_000);

    // Another user: 404, and the request is still there for its user.
    await expect(service.takeLaunch(out.token, as(BEN))).rejects.toMatchObject({ kind: 'not_found' });
    const payload = await service.takeLaunch(out.token, as(ANA));
    expect(payload).toMatchObject({
      app: 'maya',
      variant: '2025',
      executables: { linux: '/usr/autodesk/maya2025/bin/maya' },
      args: ['-noAutoloadPlugins'],
      environment: { MAYA_MODULE_PATH: '/studio/modules:/opt/autodesk/arnold/maya2025:/opt/peregrinelabs/yeti-4.2.11', ARNOLD_CORE_VERSION: '7.3.5.0' },
      tools: [
        { tool: 'mtoa', label: 'Arnold for Maya (MtoA)', version: '5.4.5' },
        { tool: 'yeti', label: 'Yeti', version: '4.2.11' },
      ],
      context: { project: { id: P, code: 'DEMO', name: 'Demo' }, entity: { type: 'Shot', id: SHOT, code: 'SH010' } },
    });
    // A second take: 404.
    await expect(service.takeLaunch(out.token, as(ANA))).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('is refused once its 10 minutes are over', async () => {
    const out = await launch();
    await sql("update schema.launch_request set created_at = created_at - interval '10 minutes', expires_at = expires_at - interval '10 minutes'");
    await expect(service.takeLaunch(out.token, as(ANA))).rejects.toMatchObject({ kind: 'not_found' });
    // Expired requests are dropped when the next one is made.
    const next = await launch();
    expect(await sql('select 1 from schema.launch_request')).toHaveLength(1);
    await sql("update schema.launch_request set expires_at = now() + interval '1 second'");
    expect((await service.takeLaunch(next.token, as(ANA))).app).toBe('maya');
  });

  it('every execute is an Action event in the outbox', async () => {
    await sql('delete from schema.outbox');
    await launch();
    await service.putCustomActions(
      JSON.stringify({ actions: [{ id: 'publish', label: 'Publish', url: 'https://h.example.com/p', entity_types: ['Shot'] }] }),
      as(ANA, 'Admin'),
    );
    const out = await service.execute({ actionId: 'publish', projectId: P, entityType: 'Shot', entityIds: [SHOT] }, as(ANA));
    const events = await sql<{ subject: string; payload: Record<string, unknown> }>('select subject, payload from schema.outbox order by seq');
    expect(events.map((e) => e.subject)).toEqual(['events.Action.create', 'events.Schema_Actions.update', 'events.Action.create']);
    expect(events[2]!.payload).toMatchObject({
      entity_type: 'Action',
      entity_id: out.kind === 'webhook' ? out.delivery_id : 'x',
      project_id: P,
      actor: ANA,
      action: 'create',
      changes: { action_id: 'publish', kind: 'webhook', entity_type: 'Shot', entity_ids: [SHOT] },
    });
  });
});

describe('custom actions', () => {
  it('keep their secret sealed at rest, keep it when left out, drop it with null, and never answer it', async () => {
    const secret = 'a-very-secret-value-42';
    const admin = as(ANA, 'Admin');
    const put = await service.putCustomActions(
      JSON.stringify({
        actions: [
          { id: 'publish', label: 'Publish', url: 'https://h.example.com/p', entity_types: ['Shot'], secret, icon: 'upload' },
          { id: 'notify', label: 'Notify', url: 'https://h.example.com/n', entity_types: ['Shot', 'Asset'], roles: ['Supervisor'] },
        ],
      }),
      admin,
    );
    expect(JSON.stringify(put)).not.toContain(secret);
    expect(put.actions.map((a) => [a.id, a.has_secret])).toEqual([
      ['publish', true],
      ['notify', false],
    ]);
    const [row] = await sql<{ secret: string }>("select secret from schema.custom_action where id = 'publish'");
    expect(row!.secret).not.toContain(secret);
    // Its event, committed with the list, shows no URL and no secret.
    const [event] = await sql<{ payload: { changes: { actions: Record<string, unknown>[] } } }>(
      "select payload from schema.outbox where payload->>'entity_type' = 'Schema.Actions' order by seq desc limit 1",
    );
    expect(JSON.stringify(event)).not.toMatch(/h\.example\.com|a-very-secret-value-42/);
    expect(event!.payload.changes.actions.map((a) => [a.id, a.has_url, a.has_secret, typeof a.digest])).toEqual([
      ['publish', true, true, 'string'],
      ['notify', true, false, 'string'],
    ]);

    await service.putCustomActions(
      JSON.stringify({ actions: [{ id: 'publish', label: 'Publish 2', url: 'https://h.example.com/p', entity_types: ['Shot'] }] }),
      admin,
    );
    expect((await service.getCustomActions(admin)).actions).toEqual([
      { id: 'publish', label: 'Publish 2', url: 'https://h.example.com/p', entity_types: ['Shot'], roles: null, icon: null, has_secret: true },
    ]);
    deliveries.length = 0;
    await service.execute({ actionId: 'publish', projectId: P, entityType: 'Shot', entityIds: [SHOT] }, as(ANA));
    expect(deliveries[0]!.secret).toBe(secret);

    await service.putCustomActions(
      JSON.stringify({ actions: [{ id: 'publish', label: 'Publish 2', url: 'https://h.example.com/p', entity_types: ['Shot'], secret: null }] }),
      admin,
    );
    expect((await service.getCustomActions(admin)).actions[0]!.has_secret).toBe(false);
  });

  it('are sealed again with a new SECRETS_KEY at start-up, while the previous key still opens them', async () => {
    const newKey = Buffer.alloc(32, 7).toString('base64');
    const rotated = new ActionRepository(orm.em.getConnection().getKnex(), natsNames(''), new SecretCipher(newKey, [TEST_SECRETS_KEY]));
    await service.putCustomActions(
      JSON.stringify({ actions: [{ id: 'publish', label: 'P', url: 'https://h.example.com/p', entity_types: ['Shot'], secret: 'rotate-me-0123456789' }] }),
      as(ANA, 'Admin'),
    );
    const [before] = await sql<{ secret: string }>("select secret from schema.custom_action where id = 'publish'");
    expect(await rotated.sealStored()).toBe(1);
    const [after] = await sql<{ secret: string }>("select secret from schema.custom_action where id = 'publish'");
    expect(after!.secret).not.toBe(before!.secret);
    expect(new SecretCipher(newKey).isCurrent(after!.secret)).toBe(true);
    expect((await rotated.customActions())[0]!.secret).toBe('rotate-me-0123456789');
    expect(await rotated.sealStored()).toBe(0);
  });
});
