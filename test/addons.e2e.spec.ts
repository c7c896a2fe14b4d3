/**
 * Addons through the gateway against the whole stack (docs/api-notes.md, "Addons"): register
 * versions (immutable, first one in production, defaults checked), production changes, studio and
 * project override layers (roles, partial checks located in the body), pins, resolved settings
 * with sources and ignored overrides, deletes refused while in use, the `Addon` and
 * `AddonSettings` events in the log, and hostile input (huge, deep, recursive or backtracking
 * schemas, 1 MB settings) answered 422 or 413 quickly, never 5xx, the service still answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api, type ApiResponse } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

const SCHEMA_V1 = {
  type: 'object',
  required: ['fps'],
  properties: {
    fps: { type: 'integer', minimum: 1, maximum: 120 },
    codec: { type: 'string', enum: ['h264', 'prores'] },
    output: { type: 'object', properties: { dir: { type: 'string' }, ext: { type: 'string', pattern: '^[a-z]+$' } } },
    tags: { type: 'array', items: { type: 'string' } },
    legacy: { type: 'boolean' },
  },
};
const V1 = { title: 'Publish', settings_schema: SCHEMA_V1, defaults: { fps: 24, codec: 'h264', output: { dir: '/out', ext: 'exr' }, tags: ['a'] } };
const SCHEMA_V2 = { ...SCHEMA_V1, properties: { ...SCHEMA_V1.properties, fps: { type: 'integer', minimum: 1, maximum: 60 }, legacy: undefined } };
delete (SCHEMA_V2.properties as Record<string, unknown>).legacy;
const V2 = { title: 'Publish 2', settings_schema: SCHEMA_V2, defaults: { fps: 25, codec: 'h264', output: { dir: '/out', ext: 'exr' }, tags: [] } };

describe('addons (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let sup: Session;
  let artist: Session;
  let projectId: string;
  let otherProject: string;
  let startEvent = 0;
  const put = (api: Api, path: string, body: unknown) => api.call('PUT', path, { body });

  beforeAll(async () => {
    e = await startE2EStack('addons');
    admin = await bootstrapAdmin(e.api);
    sup = await createUser(admin.api, 'Supervisor', 'sup@studio.test');
    artist = await createUser(admin.api, 'Artist', 'art@studio.test');
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Addons', code: 'addons' } }), 200).id;
    otherProject = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Other', code: 'other' } }), 200).id;
    startEvent = await lastEventId(admin.api);
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  it('registers versions: Admin only, names and semver checked, defaults checked, first in production, immutable', async () => {
    expectError(await put(sup.api, '/addons/publish/versions/1.0.0', V1), 403, 'forbidden');
    const bad = await put(admin.api, '/addons/Publish!/versions/v1', V1);
    expectValidation(bad, ['path', 'name']);
    expectValidation(bad, ['path', 'version']);
    expectValidation(await put(admin.api, '/addons/publish/versions/1.0.0', { ...V1, defaults: { fps: 500 } }), ['body', 'defaults', 'fps']);
    expectValidation(await put(admin.api, '/addons/publish/versions/1.0.0', { ...V1, defaults: { codec: 'prores' } }), ['body', 'defaults', 'fps'], 'fps');

    const v1 = expectStatus(await put(admin.api, '/addons/publish/versions/1.0.0', V1), 200, 'register 1.0.0');
    expect(v1).toMatchObject({ name: 'publish', version: '1.0.0', title: 'Publish', settings_schema: SCHEMA_V1, defaults: V1.defaults });
    expect(expectStatus(await put(admin.api, '/addons/publish/versions/1.0.0', V1), 200, 'same again')).toEqual(v1);
    expectError(await put(admin.api, '/addons/publish/versions/1.0.0', { ...V1, title: 'Changed' }), 409, 'duplicate_code');
    expectStatus(await put(admin.api, '/addons/publish/versions/2.0.0', V2), 200, 'register 2.0.0');
    expectStatus(await put(admin.api, '/addons/publish/versions/1.10.0', V1), 200, 'register 1.10.0');

    const addon = expectStatus(await artist.api.get('/addons/publish'), 200);
    expect(addon).toEqual({ name: 'publish', title: 'Publish', versions: ['1.0.0', '1.10.0', '2.0.0'], production_version: '1.0.0' });
    expect(expectStatus(await artist.api.get('/addons'), 200).items).toEqual([addon]);
    expect(expectStatus(await artist.api.get('/addons/publish/versions/2.0.0'), 200)).toMatchObject({ title: 'Publish 2', defaults: V2.defaults });
    expectError(await artist.api.get('/addons/nothing'), 404, 'not_found');
  });

  it('changes the production version (Admin; an unknown version is 422)', async () => {
    expectError(await sup.api.patch('/addons/publish', { production_version: '2.0.0' }), 403, 'forbidden');
    expectValidation(await admin.api.patch('/addons/publish', { production_version: '3.0.0' }), ['body', 'production_version']);
    const out = expectStatus(await admin.api.patch('/addons/publish', { production_version: '2.0.0' }), 200);
    expect(out).toMatchObject({ title: 'Publish 2', production_version: '2.0.0' });
  });

  it('checks override layers as partial objects (422 located in the body) with their roles', async () => {
    expectError(await put(sup.api, '/addons/publish/settings', { codec: 'prores' }), 403, 'forbidden');
    expectError(await put(artist.api, `/addons/publish/settings?project_id=${projectId}`, {}), 403, 'forbidden');
    // Production is 2.0.0: fps ≤ 60 and no `legacy`; `required` is not enforced on a layer.
    const wrong = await put(admin.api, '/addons/publish/settings', { fps: 90, legacy: true, output: { ext: 'EXR' }, tags: 'x' });
    expect(wrong.status).toBe(422);
    expect(wrong.body.detail.map((p: any) => p.loc).sort()).toEqual([
      ['body', 'fps'],
      ['body', 'legacy'],
      ['body', 'output', 'ext'],
      ['body', 'tags'],
    ]);
    const studio = expectStatus(await put(admin.api, '/addons/publish/settings', { codec: 'prores', output: { dir: '/studio' } }), 200);
    expect(studio).toEqual({ name: 'publish', project_id: null, version: '2.0.0', overrides: { codec: 'prores', output: { dir: '/studio' } } });
    expectError(await put(sup.api, '/addons/publish/settings?project_id=0190a0b0-0000-7000-8000-0000000000ff', {}), 404, 'not_found');
  });

  it('pins a project and resolves settings for the pin, a given version and production', async () => {
    expectError(await put(artist.api, `/addons/publish/pin?project_id=${projectId}`, { version: '1.0.0' }), 403, 'forbidden');
    expectValidation(await put(sup.api, `/addons/publish/pin?project_id=${projectId}`, { version: '9.0.0' }), ['body', 'version']);
    expect(expectStatus(await put(sup.api, `/addons/publish/pin?project_id=${projectId}`, { version: '1.0.0' }), 200)).toEqual({
      name: 'publish',
      project_id: projectId,
      version: '1.0.0',
    });
    // Checked against the pin (1.0.0): fps 100 and `legacy` fit there.
    expectStatus(await put(sup.api, `/addons/publish/settings?project_id=${projectId}`, { fps: 100, legacy: true, tags: ['p1', 'p2'] }), 200);

    const pinned = expectStatus(await artist.api.get(`/addons/publish/settings?project_id=${projectId}`), 200);
    expect(pinned).toEqual({
      name: 'publish',
      version: '1.0.0',
      settings: { fps: 100, codec: 'prores', output: { dir: '/studio', ext: 'exr' }, tags: ['p1', 'p2'], legacy: true },
      sources: { '/fps': 'project', '/codec': 'studio', '/output/dir': 'studio', '/output/ext': 'default', '/tags': 'project', '/legacy': 'project' },
      ignored: [],
    });
    const newer = expectStatus(await artist.api.get(`/addons/publish/settings?project_id=${projectId}&version=2.0.0`), 200);
    expect(newer).toEqual({
      name: 'publish',
      version: '2.0.0',
      settings: { fps: 25, codec: 'prores', output: { dir: '/studio', ext: 'exr' }, tags: ['p1', 'p2'] },
      sources: { '/fps': 'default', '/codec': 'studio', '/output/dir': 'studio', '/output/ext': 'default', '/tags': 'project' },
      ignored: ['/fps', '/legacy'],
    });
    const other = expectStatus(await artist.api.get(`/addons/publish/settings?project_id=${otherProject}`), 200);
    expect(other).toMatchObject({ version: '2.0.0', settings: { fps: 25, codec: 'prores' }, ignored: [] });
    expectError(await artist.api.get('/addons/publish/settings?project_id=0190a0b0-0000-7000-8000-0000000000ff'), 404, 'not_found');
    expectError(await artist.api.get('/addons/publish/settings?version=4.0.0'), 404, 'not_found');
  });

  it('refuses to delete the production version or a pinned one (409 code_in_use)', async () => {
    expectError(await sup.api.delete('/addons/publish/versions/1.10.0'), 403, 'forbidden');
    const prod = await admin.api.delete('/addons/publish/versions/2.0.0');
    expectError(prod, 409, 'code_in_use');
    const pinned = await admin.api.delete('/addons/publish/versions/1.0.0');
    expectError(pinned, 409, 'code_in_use');
    expect(pinned.body.usage).toBe(1);
    expect(expectStatus(await admin.api.delete('/addons/publish/versions/1.10.0'), 200)).toEqual({ name: 'publish', version: '1.10.0', deleted: true });
    expectError(await admin.api.delete('/addons/publish/versions/1.10.0'), 404, 'not_found');
    expect(expectStatus(await artist.api.get('/addons/publish'), 200).versions).toEqual(['1.0.0', '2.0.0']);
  });

  it('records Addon and AddonSettings events in the log', async () => {
    const events = await eventually(
      async () => {
        const all = await eventsAfter(admin.api, startEvent);
        const mine = all.filter((ev) => ev.entity_type === 'Addon' || ev.entity_type === 'AddonSettings');
        return mine.length >= 8 ? mine : undefined;
      },
      20_000,
      'addon events',
    );
    const addon = events.filter((ev) => ev.entity_type === 'Addon');
    expect(addon.map((ev) => [ev.action, ev.changes.registered_version ?? ev.changes.deleted_version ?? ev.changes.production_version])).toEqual([
      ['create', '1.0.0'],
      ['update', '2.0.0'],
      ['update', '1.10.0'],
      ['update', '2.0.0'],
      ['update', '1.10.0'],
    ]);
    expect(addon.every((ev) => ev.actor === admin.user.id && ev.project_id === null && ev.entity_id === addon[0].entity_id)).toBe(true);
    const settings = events.filter((ev) => ev.entity_type === 'AddonSettings');
    expect(settings.map((ev) => [ev.project_id, Object.keys(ev.changes).sort()])).toEqual([
      [null, ['addon', 'overrides']],
      [projectId, ['addon', 'pinned_version']],
      [projectId, ['addon', 'overrides']],
    ]);
    expect(settings[1].actor).toBe(sup.user.id);
    const filtered = expectStatus(await admin.api.get(`/events?entity_type=AddonSettings&project_id=${projectId}`), 200).items;
    expect(filtered).toHaveLength(2);
  });

  describe('hostile input: 422 or 413, quickly, never 5xx', () => {
    const timed = async (fn: () => Promise<ApiResponse>) => {
      const t0 = Date.now();
      const res = await fn();
      return { res, ms: Date.now() - t0 };
    };
    const version = (schema: unknown, defaults: unknown = {}) => ({ title: 'Hostile', settings_schema: schema, defaults });

    it('a huge schema is 413 at the gateway or 422 in the service', async () => {
      const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
      const { res, ms } = await timed(() => put(admin.api, '/addons/hostile/versions/1.0.0', version(wide)));
      expect([413, 422]).toContain(res.status);
      expect(ms).toBeLessThan(5000);
      const many = { type: 'object', properties: Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`p${i}`, {}])) };
      const r2 = await put(admin.api, '/addons/hostile/versions/1.0.0', version(many));
      expectValidation(r2, ['body', 'settings_schema']);
      expect(r2.body.detail[0].type).toBe('too_large');
      const big = await put(admin.api, '/addons/hostile/versions/1.0.0', version({ type: 'object', description: 'x'.repeat(300_000) }));
      expectError(big, 413, 'payload_too_large');
    });

    it('a deeply nested schema is 422 (too_deep), at the gateway or in the service', async () => {
      let node: unknown = { type: 'string' };
      for (let i = 0; i < 12; i++) node = { type: 'object', properties: { a: node } };
      const res = await put(admin.api, '/addons/hostile/versions/1.0.0', version(node));
      expect(res.status).toBe(422);
      expect(res.body.detail.some((p: any) => p.type === 'too_deep')).toBe(true);
      let deeper: unknown = {};
      for (let i = 0; i < 200; i++) deeper = { type: 'object', properties: { a: deeper } };
      const gw = await put(admin.api, '/addons/hostile/versions/1.0.0', version(deeper));
      expect(gw.status).toBe(422);
    });

    it('recursive $ref is refused: references are not supported', async () => {
      const schema = {
        type: 'object',
        $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } },
        properties: { root: { $ref: '#' } },
      };
      const res = await put(admin.api, '/addons/hostile/versions/1.0.0', version(schema));
      expectValidation(res, ['body', 'settings_schema', '$defs']);
      expectValidation(res, ['body', 'settings_schema', 'properties', 'root', '$ref']);
    });

    it('a backtracking pattern is refused; a slow input against an accepted pattern still answers at once', async () => {
      const evil = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
      expectValidation(await put(admin.api, '/addons/hostile/versions/1.0.0', version(evil)), ['body', 'settings_schema', 'properties', 's', 'pattern']);
      // Overlapping alternation passes the nesting check but runs on RE2, in linear time.
      const alt = { type: 'object', properties: { s: { type: 'string', pattern: '^(a|a)*$' } } };
      expectStatus(await put(admin.api, '/addons/hostile/versions/1.0.0', version(alt)), 200, 'register alt');
      const { res, ms } = await timed(() => put(admin.api, '/addons/hostile/settings', { s: `${'a'.repeat(60_000)}!` }));
      expectValidation(res, ['body', 's']);
      expect(ms).toBeLessThan(3000);
    });

    it('1 MB settings bodies are 413; the service still answers afterwards', async () => {
      const res = await put(admin.api, `/addons/hostile/settings?project_id=${projectId}`, { s: 'a'.repeat(1_048_576) });
      expectError(res, 413, 'payload_too_large');
      const nested = await put(admin.api, '/addons/hostile/settings', JSON.parse(`${'{"a":'.repeat(100)}1${'}'.repeat(100)}`));
      expect(nested.status).toBe(422);
      expectStatus(await artist.api.get('/addons/hostile/settings'), 200, 'still answering');
    });
  });
});
