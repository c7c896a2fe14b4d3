/**
 * The record service's rules per kind of record against an in-memory store
 * (test/record.service.memory.ts): Representations, Notes, Playlists, and writes against a schema,
 * without PostgreSQL or NATS.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RecordService } from './record.service.js';
import { admin, artist, ctxOf, failure, link, ME, newRecordService, OTHER, type MemoryRecordStore } from '../../../test/record.service.memory.js';

let store: MemoryRecordStore;
let service: RecordService;
let committed: string[];
let projectId: string;

beforeEach(async () => {
  ({ store, service, committed, projectId } = await newRecordService());
});

describe('RecordService Representations', () => {
  const media = (ctx: CallContext): CallContext => ({ ...ctx, principal: { ...ctx.principal!, via: 'media-transcode' } });
  const publish = (ctx: CallContext, data: Record<string, unknown>) =>
    service.create({ entityType: 'Representation', projectId, dataJson: JSON.stringify(data) }, ctx);

  it('lets every role publish name, version and files, and no person write a transcode field, Admin included', async () => {
    const viewer = ctxOf('Viewer');
    const rep = await publish(viewer, { name: 'plate', files: { exr: { path: '/a' } } });
    for (const field of ['transcode_status', 'transcode_error', 'review_kind', 'review_media_key', 'thumbnail_media_key', 'attempts']) {
      for (const ctx of [viewer, admin, ctxOf('Service', '', 'service')]) {
        expect(await failure(publish(ctx, { name: 'x', [field]: null })), field).toMatchObject({ kind: 'forbidden' });
        expect(await failure(service.update({ entityType: 'Representation', id: rep.id, dataJson: JSON.stringify({ [field]: 'done' }) }, ctx))).toMatchObject({
          kind: 'forbidden',
        });
      }
    }
    // 403 before the body's 422 (a malformed project id is no reason to answer otherwise).
    expect(await failure(service.create({ entityType: 'Representation', projectId: 'nope', dataJson: '{"attempts":1}' }, viewer))).toMatchObject({
      kind: 'forbidden',
    });
    expect((await service.update({ entityType: 'Representation', id: rep.id, dataJson: '{"name":"plate v2"}' }, viewer)).data.name).toBe('plate v2');
    expect(store.rows.get(rep.id)!.data).toEqual({ name: 'plate v2', files: { exr: { path: '/a' } } });
  });

  it('lets the media service write them, for the uploading person and for itself', async () => {
    const rep = await publish(media(ctxOf('Viewer')), { name: 'up.mov', transcode_status: 'pending', attempts: 0 });
    expect(rep.createdBy).toBe(ME);
    const own = media({ requestId: 'job', principal: { userId: '', role: 'Service', authKind: 'service' } });
    const done = await service.update({ entityType: 'Representation', id: rep.id, dataJson: '{"transcode_status":"done","attempts":1}' }, own);
    expect(done.data).toMatchObject({ transcode_status: 'done', attempts: 1 });
  });
});

describe('RecordService Notes', () => {
  const note = (ctx: CallContext, data: Record<string, unknown> = { content: 'hi' }) =>
    service.create({ entityType: 'Note', projectId, dataJson: JSON.stringify(data) }, ctx);
  const guest: CallContext = { requestId: 'g', principal: { userId: '', role: 'Guest', authKind: 'guest', guestName: 'Client' } };
  const patch = (id: string, ctx: CallContext, data: Record<string, unknown> = { content: 'edited' }) =>
    service.update({ entityType: 'Note', id, dataJson: JSON.stringify(data) }, ctx);

  it('sets the author to the caller; naming yourself is accepted, anyone else is 403', async () => {
    const mine = await note(artist);
    expect(mine.data.author).toEqual(link(ME));
    expect(store.outbox.at(-1)!.payload.changes).toMatchObject({ author: link(ME) });
    expect((await note(artist, { content: 'x', author: link(ME.toUpperCase()) })).data.author).toEqual(link(ME));
    for (const ctx of [artist, admin]) expect(await failure(note(ctx, { content: 'x', author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
    // A service acting on its own keeps who wrote an imported note; it has no author of its own.
    const svc = ctxOf('Service', '', 'service');
    expect((await note(svc, { content: 'x', author: link(OTHER) })).data.author).toEqual(link(OTHER));
    expect((await note(svc)).data.author).toBeUndefined();
    expect(await failure(patch(mine.id, artist, { author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
    expect(await failure(patch(mine.id, artist, { author: null }))).toMatchObject({ kind: 'forbidden' });
  });

  it('writes verdict and guest_name only for a share link guest, for every role else 403', async () => {
    const mine = await note(artist);
    for (const ctx of [artist, admin, ctxOf('Supervisor'), ctxOf('Service', '', 'service')]) {
      for (const data of [
        { content: 'x', verdict: 'approve' },
        { content: 'x', guest_name: 'Client' },
      ]) {
        expect(await failure(note(ctx, data))).toMatchObject({ kind: 'forbidden' });
        expect(await failure(patch(mine.id, ctx, data))).toMatchObject({ kind: 'forbidden' });
      }
    }
    const theirs = await note(guest, { content: 'ok', verdict: 'approve', guest_name: 'Client' });
    expect(theirs.data).toEqual({ content: 'ok', verdict: 'approve', guest_name: 'Client' });
    expect(await failure(note(guest, { content: 'x', author: link(OTHER) }))).toMatchObject({ kind: 'forbidden' });
  });

  it('is edited and retired by its author, Admin or Supervisor; revived by the same', async () => {
    const mine = await note(artist);
    for (const ctx of [ctxOf('Artist', OTHER), ctxOf('Coordinator', OTHER), ctxOf('Viewer', OTHER), guest]) {
      expect(await failure(patch(mine.id, ctx))).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('author') });
      expect(await failure(service.retire('Note', mine.id, undefined, ctx))).toMatchObject({ kind: 'forbidden' });
    }
    expect((await patch(mine.id, artist)).data.content).toBe('edited');
    expect((await patch(mine.id, ctxOf('Supervisor', OTHER), { content: 'by sup' })).data).toEqual({ content: 'by sup', author: link(ME) });
    await patch(mine.id, ctxOf('Admin', OTHER), { content: 'by admin' });
    await service.retire('Note', mine.id, undefined, ctxOf('Supervisor', OTHER));
    expect(await failure(service.revive('Note', mine.id, ctxOf('Artist', OTHER)))).toMatchObject({ kind: 'forbidden' });
    await service.revive('Note', mine.id, artist);
    // A 404 stays a 404: existence is judged before whose the note is.
    expect(await failure(patch(OTHER, ctxOf('Viewer', OTHER)))).toMatchObject({ kind: 'not_found' });
  });

  it('never edits a guest note; Admin, Supervisor and Coordinator retire and revive it', async () => {
    const theirs = await note(guest, { content: 'ok', verdict: 'approve', guest_name: 'Client' });
    for (const ctx of [admin, ctxOf('Supervisor'), ctxOf('Coordinator'), artist, ctxOf('Service', '', 'service')]) {
      expect(await failure(patch(theirs.id, ctx))).toMatchObject({ kind: 'forbidden', message: expect.stringContaining('never edited') });
    }
    for (const ctx of [artist, ctxOf('Viewer'), guest])
      expect(await failure(service.retire('Note', theirs.id, undefined, ctx))).toMatchObject({ kind: 'forbidden' });
    await service.retire('Note', theirs.id, undefined, ctxOf('Coordinator'));
    expect(await failure(service.revive('Note', theirs.id, artist))).toMatchObject({ kind: 'forbidden' });
    await service.revive('Note', theirs.id, ctxOf('Coordinator'));
    expect(store.rows.get(theirs.id)!.data).toEqual({ content: 'ok', verdict: 'approve', guest_name: 'Client' });
  });
});

describe('RecordService Playlists', () => {
  const version = async (project: string) => service.create({ entityType: 'Version', projectId: project, dataJson: '{"code":"v"}' }, artist);
  const ref = (r: { id: string }) => ({ type: 'Version', id: r.id });

  it('holds Versions of its own project only: 422 at the offending element, on create, patch and a move', async () => {
    const other = (await service.create({ entityType: 'Project', dataJson: '{"code":"Q"}' }, admin)).id;
    const [a, b, foreign] = [await version(projectId), await version(projectId), await version(other)];
    const bad = await failure(
      service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a), ref(foreign), ref(b)] }) }, artist),
    );
    expect(bad.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 1], type: 'link_project' })]);
    const list = await service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a)] }) }, artist);
    const patched = await failure(
      service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions: [ref(foreign), ref(a)] }) }, admin),
    );
    expect(patched.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    const moved = await failure(service.update({ entityType: 'Playlist', id: list.id, projectId: other }, admin));
    expect(moved.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    expect(
      (await service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions: [ref(b), ref(a)] }) }, artist)).data.versions,
    ).toEqual([ref(b), ref(a)]);
  });

  it('while shared, changes its versions only for Admin, Supervisor and Coordinator; its name stays open', async () => {
    const [a, b] = [await version(projectId), await version(projectId)];
    const list = await service.create({ entityType: 'Playlist', projectId, dataJson: JSON.stringify({ name: 'p', versions: [ref(a)] }) }, artist);
    store.sharedPlaylists.add(list.id);
    const change = (ctx: CallContext, versions: unknown) =>
      service.update({ entityType: 'Playlist', id: list.id, dataJson: JSON.stringify({ versions }) }, ctx);
    for (const ctx of [artist, ctxOf('Viewer')]) {
      expect(await failure(change(ctx, [ref(a), ref(b)]))).toMatchObject({ kind: 'forbidden' });
      expect(await failure(change(ctx, []))).toMatchObject({ kind: 'forbidden' });
      // 403 before the body's 422.
      expect(await failure(change(ctx, [{ type: 'Version', id: 'bad' }]))).toMatchObject({ kind: 'forbidden' });
    }
    // The same versions again is no change.
    await change(artist, [ref(a)]);
    await service.update({ entityType: 'Playlist', id: list.id, dataJson: '{"name":"renamed"}' }, artist);
    for (const role of ['Admin', 'Supervisor', 'Coordinator'] as const) await change(ctxOf(role), [ref(b), ref(a)]);
    store.sharedPlaylists.clear();
    expect((await change(artist, [ref(a)])).data.versions).toEqual([ref(a)]);
  });
});

describe('RecordService with a schema', () => {
  const snapshot = (version: number, sizes: string[]): SchemaSnapshot => ({
    version,
    entity_types: [
      { code: 'Project', project_scoped: false, fields: [{ code: 'code', type: 'text' }] },
      {
        code: 'Shot',
        project_scoped: true,
        fields: [
          { code: 'code', type: 'text', required: true },
          { code: 'size', type: 'enum', options: sizes.map((code) => ({ code })) },
          { code: 'owner', type: 'link', link_types: ['User'] },
          { code: 'cut_in', type: 'integer', default: 1001 },
        ],
      },
      {
        code: 'Task',
        project_scoped: true,
        fields: [
          { code: 'name', type: 'text' },
          { code: 'step', type: 'text' },
          { code: 'priority', type: 'text' },
          { code: 'entity', type: 'link' },
          { code: 'estimate_minutes', type: 'integer' },
        ],
      },
      { code: 'User', project_scoped: false, fields: [{ code: 'name', type: 'text' }] },
    ],
    statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }],
    steps: [{ code: 'anim' }, { code: 'comp' }],
    priorities: [{ code: 'high' }],
    transitions: {
      Shot: [
        { from: 'wtg', to: ['ip'] },
        { from: 'ip', to: ['fin'], roles: ['Supervisor'] },
      ],
    },
    task_templates: [
      {
        code: 'basic',
        entity_type: 'Shot',
        tasks: [
          { name: 'Animation', step: 'anim', estimate_minutes: 480 },
          { name: 'Comp', step: 'comp' },
        ],
      },
    ],
  });
  const apply = (version: number, sizes = ['s', 'm']) => store.applySchema(version, JSON.stringify(snapshot(version, sizes)));
  const shot = (data: Record<string, unknown>, extra: Partial<{ status: string; taskTemplate: string }> = {}) =>
    service.create({ entityType: 'Shot', projectId, dataJson: JSON.stringify(data), ...extra }, artist);

  beforeEach(async () => {
    await apply(1);
  });

  it('refuses unknown keys, bad values and missing required fields at once and writes nothing', async () => {
    const before = store.rows.size;
    const err = await failure(shot({ size: 'xl', colour: 1 }, { status: 'nope' }));
    expect(err.problems.map((p) => p.loc.join('.')).sort()).toEqual(['data.code', 'data.colour', 'data.size', 'status']);
    expect(store.rows.size).toBe(before);
    expect((await failure(service.create({ entityType: 'Widget', projectId }, artist))).kind).toBe('not_found');
  });

  it('applies defaults and accepts a valid write', async () => {
    const r = await shot({ code: 'sh010', size: 's' }, { status: 'wtg' });
    expect(r.data).toEqual({ code: 'sh010', size: 's', cut_in: 1001 });
  });

  it('refuses links to missing, retired or other-typed records, naming each', async () => {
    const user = await service.create({ entityType: 'User', dataJson: '{"name":"u"}' }, admin);
    await shot({ code: 'a', owner: link(user.id) });
    const err = await failure(shot({ code: 'b', owner: link(OTHER) }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'owner'], type: 'link_not_found' })]);
    await service.retire('User', user.id, undefined, admin);
    expect((await failure(shot({ code: 'c', owner: link(user.id) }))).problems[0]!.type).toBe('link_not_found');
    // Named together with the other problems of the write.
    const all = await failure(shot({ code: 'd', size: 'xl', owner: link(OTHER) }));
    expect(all.problems.map((p) => [p.loc.join('.'), p.type])).toEqual([
      ['data.size', 'enum'],
      ['data.owner', 'link_not_found'],
    ]);
  });

  it('a write after a newer snapshot was stored validates against it, whatever this process held', async () => {
    await shot({ code: 'warm', size: 's' });
    // Another replica (or the schema service) stores version 2: option 'xl' added, 's' removed.
    await apply(2, ['m', 'xl']);
    expect((await shot({ code: 'a', size: 'xl' })).data.size).toBe('xl');
    expect((await failure(shot({ code: 'b', size: 's' }))).problems[0]!.loc).toEqual(['data', 'size']);
    await apply(3, ['s']);
    const existing = [...store.rows.values()].find((r) => r.data.code === 'warm')!;
    expect((await failure(service.update({ entityType: 'Shot', id: existing.id, dataJson: '{"size":"xl"}' }, artist))).problems[0]!.loc).toEqual([
      'data',
      'size',
    ]);
    // A patch that does not touch a field is not refused for the field's old value.
    await apply(4, ['m']);
    expect((await service.update({ entityType: 'Shot', id: existing.id, dataJson: '{"code":"warm2"}' }, artist)).data.size).toBe('s');
  });

  it('enforces transitions per role, Admins included; a create with a status is not a transition', async () => {
    const r = await shot({ code: 'a' }, { status: 'wtg' });
    expect(await failure(service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, admin))).toMatchObject({
      kind: 'conflict',
      code: 'transition_not_allowed',
    });
    await service.update({ entityType: 'Shot', id: r.id, status: 'ip' }, artist);
    expect(await failure(service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, artist))).toMatchObject({ code: 'transition_not_allowed' });
    expect((await service.update({ entityType: 'Shot', id: r.id, status: 'fin' }, ctxOf('Supervisor'))).status).toBe('fin');
    expect((await shot({ code: 'b' }, { status: 'fin' })).status).toBe('fin');
  });

  it('creates the task template’s tasks in the same write, one event each; an unknown template is 422', async () => {
    const before = store.outbox.length;
    const r = await shot({ code: 'sh020' }, { taskTemplate: 'basic' });
    const tasks = [...store.rows.values()].filter((row) => row.entityType === 'Task');
    expect(tasks.map((t) => t.data)).toEqual([
      { name: 'Animation', step: 'anim', entity: { type: 'Shot', id: r.id }, estimate_minutes: 480 },
      { name: 'Comp', step: 'comp', entity: { type: 'Shot', id: r.id } },
    ]);
    expect(store.outbox.slice(before).map((e) => e.payload.entity_type)).toEqual(['Shot', 'Task', 'Task']);
    expect(committed.slice(-3)).toEqual(store.outbox.slice(before).map((e) => e.payload.event_id));
    const rows = store.rows.size;
    const err = await failure(shot({ code: 'sh030' }, { taskTemplate: 'nope' }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['task_template'] })]);
    expect(store.rows.size).toBe(rows);
  });
});
