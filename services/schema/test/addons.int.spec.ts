/**
 * Addons against the real PostgreSQL: the store (migration schema-0003-addons) under the
 * AddonsService, every rule of docs/api-notes.md "Addons" that needs storage — immutable
 * versions, the first version in production, deletes refused while in production or pinned,
 * override layers checked against the version they apply to, pins, resolved settings for a
 * version, a pin or production with `ignored`, roles, and the events in schema's outbox,
 * committed with their change. Projects are a fixed set here (the records port is a stand-in).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AppError, createLogger, natsNames, newId, openOrm, type CallContext, type StreamEvent } from '@reelbase/lib-platform';
import { createTestDatabase, type TestDatabase } from '@reelbase/lib-testkit';
import { AddonsService } from '../src/addons/domain/addons.service.js';
import { AddonRepository } from '../src/addons/store/addons.repository.js';
import { SCHEMA_MIGRATIONS, SCHEMA_SCHEMA } from '../src/migrations.js';

const as = (role: string): CallContext => ({ requestId: 'int', principal: { userId: newId(), role, authKind: 'token' } as never });
const admin = as('Admin');
const supervisor = as('Supervisor');
const artist = as('Artist');

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

const V1 = {
  title: 'Publish',
  settings_schema: {
    type: 'object',
    required: ['fps'],
    properties: {
      fps: { type: 'integer', minimum: 1, maximum: 120 },
      codec: { type: 'string', enum: ['h264', 'prores'] },
      output: { type: 'object', properties: { dir: { type: 'string' }, ext: { type: 'string' } } },
      legacy: { type: 'boolean' },
    },
  },
  defaults: { fps: 24, codec: 'h264', output: { dir: '/out', ext: 'exr' } },
};
// 2.0.0 drops `legacy` and narrows fps.
const V2 = {
  title: 'Publish 2',
  settings_schema: {
    type: 'object',
    required: ['fps'],
    properties: {
      fps: { type: 'integer', minimum: 1, maximum: 60 },
      codec: { type: 'string', enum: ['h264', 'prores'] },
      output: { type: 'object', properties: { dir: { type: 'string' }, ext: { type: 'string' } } },
    },
  },
  defaults: { fps: 25, codec: 'h264', output: { dir: '/out', ext: 'exr' } },
};

describe('addons on PostgreSQL', () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let service: AddonsService;
  const committed: StreamEvent[] = [];
  const projectA = newId();
  const projectB = newId();
  const projects = new Set([projectA, projectB]);

  const outbox = async (): Promise<StreamEvent[]> => {
    const res = await orm.em.getConnection().execute<{ subject: string; payload: StreamEvent }[]>('select subject, payload from schema.outbox order by seq');
    return res.map((r) => r.payload);
  };
  const register = (name: string, version: string, body: unknown, ctx = admin) => service.registerVersion(ctx, name, version, JSON.stringify(body));

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm({ clientUrl: db.url, schema: SCHEMA_SCHEMA, entities: [], migrations: SCHEMA_MIGRATIONS, logger: createLogger('test', 'silent') });
    const repo = new AddonRepository(orm.em.getConnection().getKnex(), natsNames('t'), (e) => committed.push(e));
    service = new AddonsService({ store: repo, projects: { projectExists: async (id) => projects.has(id) } });
  });
  afterAll(async () => {
    await orm?.close(true);
    await db?.drop();
  });
  beforeEach(() => {
    committed.length = 0;
  });

  it('registers a version: the first is the production version, one Addon create event in the outbox', async () => {
    const out = await register('publish', '1.0.0', V1);
    expect(out.created).toBe(true);
    expect(out.version).toMatchObject({ name: 'publish', version: '1.0.0', title: 'Publish', defaults: V1.defaults });
    expect(await service.get('publish')).toEqual({ name: 'publish', title: 'Publish', versions: ['1.0.0'], production_version: '1.0.0' });
    const events = (await outbox()).filter((e) => e.entity_type === 'Addon');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'create',
      project_id: null,
      changes: { name: 'publish', production_version: '1.0.0', registered_version: '1.0.0' },
    });
    expect(committed.map((e) => e.event_id)).toEqual([events[0]!.event_id]);
  });

  it('is immutable: the same body is 200 with no change, another body 409 duplicate_code', async () => {
    const before = (await outbox()).length;
    const again = await register('publish', '1.0.0', { ...V1, settings_schema: { ...V1.settings_schema } });
    expect(again.created).toBe(false);
    const err = await failure(register('publish', '1.0.0', { ...V1, title: 'Other' }));
    expect([err.kind, err.code]).toEqual(['conflict', 'duplicate_code']);
    expect((await outbox()).length).toBe(before);
  });

  it('checks names, versions, the schema and the defaults (422 with loc)', async () => {
    const err = await failure(register('Bad Name', 'v1', V1));
    expect(err.problems.map((p) => p.loc)).toEqual([
      ['path', 'name'],
      ['path', 'version'],
    ]);
    const defaults = await failure(register('publish', '3.0.0', { ...V1, defaults: { fps: 0, codec: 'vp9', nope: 1 } }));
    expect(defaults.problems.map((p) => p.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'defaults', 'fps'],
        ['body', 'defaults', 'codec'],
      ]),
    );
    const missing = await failure(register('publish', '3.0.0', { ...V1, defaults: {} }));
    expect(missing.problems).toEqual([{ loc: ['body', 'defaults', 'fps'], msg: 'Field required', type: 'missing' }]);
    const schema = await failure(register('publish', '3.0.0', { ...V1, settings_schema: { type: 'object', properties: { a: { $ref: '#' } } } }));
    expect(schema.problems.map((p) => p.loc)).toEqual([['body', 'settings_schema', 'properties', 'a', '$ref']]);
    expect((await service.get('publish')).versions).toEqual(['1.0.0']);
  });

  it('lists versions ascending by semver and keeps production on the first until PATCHed', async () => {
    await register('publish', '2.0.0', V2);
    await register('publish', '1.10.0', V1);
    await register('publish', '1.2.0-beta.1', V1);
    expect(await service.get('publish')).toMatchObject({ versions: ['1.0.0', '1.2.0-beta.1', '1.10.0', '2.0.0'], production_version: '1.0.0' });
    const unknown = await failure(service.setProduction(admin, 'publish', JSON.stringify({ production_version: '9.9.9' })));
    expect(unknown.problems.map((p) => p.loc)).toEqual([['body', 'production_version']]);
    expect((await failure(service.setProduction(supervisor, 'publish', JSON.stringify({ production_version: '2.0.0' })))).kind).toBe('forbidden');
    const out = await service.setProduction(admin, 'publish', JSON.stringify({ production_version: '2.0.0' }));
    expect(out).toMatchObject({ production_version: '2.0.0', title: 'Publish 2' });
    expect(committed.map((e) => (e.changes as { registered_version?: string }).registered_version)).toEqual(['2.0.0', '1.10.0', '1.2.0-beta.1', undefined]);
    expect(committed.at(-1)).toEqual(
      expect.objectContaining({ entity_type: 'Addon', action: 'update', changes: { production_version: '2.0.0', title: 'Publish 2' } }),
    );
    expect((await service.list()).items.map((i) => i.name)).toEqual(['publish']);
  });

  it('checks override layers as partial objects against production or the pin (422 loc into the body)', async () => {
    // Production is 2.0.0: fps at most 60, `legacy` unknown; required fps not enforced.
    const err = await failure(service.putSettings(admin, 'publish', undefined, JSON.stringify({ fps: 100, legacy: true, output: { ext: 3 } })));
    expect(err.problems.map((p) => [p.loc, p.type]).sort()).toEqual([
      [['body', 'fps'], 'less_than_equal'],
      [['body', 'legacy'], 'extra_forbidden'],
      [['body', 'output', 'ext'], 'string_type'],
    ]);
    expect((await failure(service.putSettings(supervisor, 'publish', undefined, '{}'))).kind).toBe('forbidden');
    const studio = await service.putSettings(admin, 'publish', undefined, JSON.stringify({ codec: 'prores', output: { dir: '/studio' } }));
    expect(studio).toEqual({ name: 'publish', project_id: null, version: '2.0.0', overrides: { codec: 'prores', output: { dir: '/studio' } } });
    expect(committed).toEqual([
      expect.objectContaining({
        entity_type: 'AddonSettings',
        action: 'create',
        project_id: null,
        changes: { addon: 'publish', overrides: { codec: 'prores', output: { dir: '/studio' } } },
      }),
    ]);
    // The same layer again: no change, no event.
    committed.length = 0;
    await service.putSettings(admin, 'publish', undefined, JSON.stringify({ output: { dir: '/studio' }, codec: 'prores' }));
    expect(committed).toEqual([]);
  });

  it('pins a project (Admin, Supervisor), checks its layer against the pin, and resolves per version', async () => {
    expect((await failure(service.pin(artist, 'publish', projectA, JSON.stringify({ version: '1.0.0' })))).kind).toBe('forbidden');
    expect((await failure(service.pin(supervisor, 'publish', newId(), JSON.stringify({ version: '1.0.0' })))).kind).toBe('not_found');
    const unknown = await failure(service.pin(supervisor, 'publish', projectA, JSON.stringify({ version: '7.0.0' })));
    expect(unknown.problems.map((p) => p.loc)).toEqual([['body', 'version']]);
    expect(await service.pin(supervisor, 'publish', projectA, JSON.stringify({ version: '1.0.0' }))).toEqual({
      name: 'publish',
      project_id: projectA,
      version: '1.0.0',
    });
    expect(committed).toEqual([
      expect.objectContaining({ entity_type: 'AddonSettings', project_id: projectA, changes: { addon: 'publish', pinned_version: '1.0.0' } }),
    ]);

    // The pin is 1.0.0, so `legacy` and fps 100 fit the project's layer.
    await service.putSettings(supervisor, 'publish', projectA, JSON.stringify({ fps: 100, legacy: true, output: { ext: 'png' } }));
    expect((await failure(service.putSettings(artist, 'publish', projectA, '{}'))).kind).toBe('forbidden');

    const pinned = await service.settings('publish', projectA, undefined);
    expect(pinned).toEqual({
      name: 'publish',
      version: '1.0.0',
      settings: { fps: 100, codec: 'prores', output: { dir: '/studio', ext: 'png' }, legacy: true },
      sources: { '/fps': 'project', '/codec': 'studio', '/output/dir': 'studio', '/output/ext': 'project', '/legacy': 'project' },
      ignored: [],
    });
    // Read for 2.0.0: the project's fps (100 > 60) and `legacy` no longer fit and are named.
    const newer = await service.settings('publish', projectA, '2.0.0');
    expect(newer).toEqual({
      name: 'publish',
      version: '2.0.0',
      settings: { fps: 25, codec: 'prores', output: { dir: '/studio', ext: 'png' } },
      sources: { '/fps': 'default', '/codec': 'studio', '/output/dir': 'studio', '/output/ext': 'project' },
      ignored: ['/fps', '/legacy'],
    });
    // Another project has no pin: production (2.0.0), studio layer only.
    expect(await service.settings('publish', projectB, undefined)).toMatchObject({ version: '2.0.0', settings: { fps: 25, codec: 'prores' } });
    // The studio alone.
    expect(await service.settings('publish', undefined, undefined)).toMatchObject({ version: '2.0.0', ignored: [] });
    expect((await failure(service.settings('publish', newId(), undefined))).kind).toBe('not_found');
    expect((await failure(service.settings('publish', undefined, '5.0.0'))).kind).toBe('not_found');
    expect((await failure(service.settings('nothing', undefined, undefined))).kind).toBe('not_found');
    expect((await failure(service.settings('publish', undefined, 'latest'))).problems.map((p) => p.loc)).toEqual([['query', 'version']]);
  });

  it('refuses to delete the production version or a pinned one (409 code_in_use), deletes others', async () => {
    const prod = await failure(service.deleteVersion(admin, 'publish', '2.0.0'));
    expect([prod.code, prod.extra]).toEqual(['code_in_use', { usage: 0 }]);
    const pinned = await failure(service.deleteVersion(admin, 'publish', '1.0.0'));
    expect([pinned.code, pinned.extra]).toEqual(['code_in_use', { usage: 1 }]);
    expect((await failure(service.deleteVersion(supervisor, 'publish', '1.10.0'))).kind).toBe('forbidden');
    expect((await failure(service.deleteVersion(admin, 'publish', '4.0.0'))).kind).toBe('not_found');
    expect(await service.deleteVersion(admin, 'publish', '1.10.0')).toEqual({ name: 'publish', version: '1.10.0', deleted: true });
    expect((await service.get('publish')).versions).toEqual(['1.0.0', '1.2.0-beta.1', '2.0.0']);
    // Unpinned, 1.0.0 may go; the project then reads production.
    await service.pin(admin, 'publish', projectA, JSON.stringify({ version: null }));
    await service.deleteVersion(admin, 'publish', '1.0.0');
    expect(await service.settings('publish', projectA, undefined)).toMatchObject({ version: '2.0.0', ignored: ['/fps', '/legacy'] });
    // A version deleted may be registered again, with another body.
    await register('publish', '1.0.0', { ...V1, title: 'Publish again' });
    expect((await service.getVersion('publish', '1.0.0')) as object).toMatchObject({ title: 'Publish again' });
  });

  it('serialises concurrent registrations of one new addon: one create, the rest updates or no-ops', async () => {
    const versions = ['0.1.0', '0.2.0', '0.3.0', '0.1.0', '0.2.0'];
    const results = await Promise.all(versions.map((v) => register('race', v, V1)));
    expect(results.filter((r) => r.created)).toHaveLength(3);
    const events = (await outbox()).filter((e) => e.entity_type === 'Addon' && (e.changes as { name?: string }).name === 'race');
    expect(events.map((e) => e.action).sort()).toEqual(['create', 'update', 'update']);
    const head = await service.get('race');
    expect(head.versions).toEqual(['0.1.0', '0.2.0', '0.3.0']);
    expect(['0.1.0', '0.2.0', '0.3.0']).toContain(head.production_version);
  });

  it('a PUT replaces a layer whole; {} clears it', async () => {
    await service.putSettings(admin, 'race', undefined, JSON.stringify({ codec: 'prores', output: { dir: '/a', ext: 'tif' } }));
    await service.putSettings(admin, 'race', undefined, JSON.stringify({ output: { ext: 'png' } }));
    const replaced = (await service.settings('race', undefined, undefined)) as { settings: unknown; sources: Record<string, string> };
    expect(replaced.settings).toEqual({ fps: 24, codec: 'h264', output: { dir: '/out', ext: 'png' } });
    expect(replaced.sources).toEqual({ '/fps': 'default', '/codec': 'default', '/output/dir': 'default', '/output/ext': 'studio' });
    await service.putSettings(admin, 'race', undefined, '{}');
    expect(((await service.settings('race', undefined, undefined)) as { settings: unknown }).settings).toEqual(V1.defaults);
    expect(committed.map((e) => e.action)).toEqual(['create', 'update', 'update']);
  });
});
