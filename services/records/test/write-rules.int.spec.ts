/**
 * The write rules of Playlist, Representation and Note against the real PostgreSQL, through a
 * real signed gRPC client (docs/api-notes.md, "Roles and who may write"): a Playlist holds its
 * own project's Versions; its versions change only for a role that may share while a share link
 * is live (revoked and expired links do not count); transcode fields come only through the media
 * service; a Note's author is its writer, and a guest's note is only retired.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEDIA_SERVICE, newId, type CallContext, type GrpcClient, type Role } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';

const as = (role: Role, userId: string = newId()): CallContext => ({ requestId: `w-${role}`, principal: { userId, role, authKind: 'token' } });
const admin = as('Admin');
const coordinator = as('Coordinator');
const artist = as('Artist');

let world: RecordsWorld;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let sql: pg.Client;

beforeAll(async () => {
  world = await startRecordsWorld('rules');
  ({ client, sql } = world);
});

afterAll(async () => {
  await world?.stop();
});

const data = (r: recordsv1.Record) => JSON.parse(r.dataJson) as Record<string, unknown>;
const ref = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });
async function create(entityType: string, body: Record<string, unknown>, projectId: string | undefined, ctx: CallContext = admin): Promise<recordsv1.Record> {
  return (await client.call.createRecord({ entityType, projectId, dataJson: JSON.stringify(body) }, ctx)).record!;
}
const patch = (entityType: string, id: string, body: Record<string, unknown>, ctx: CallContext) =>
  client.call.updateRecord({ entityType, id, dataJson: JSON.stringify(body) }, ctx);

describe('Playlist versions', () => {
  it("holds the Playlist's own project's Versions only (422 at the element), on create, patch and a move", async () => {
    const p = await create('Project', { name: 'Own', code: 'own' }, undefined);
    const q = await create('Project', { name: 'Other', code: 'other' }, undefined);
    const [v1, v2] = [await create('Version', { code: 'v1' }, p.id, artist), await create('Version', { code: 'v2' }, p.id, artist)];
    const foreign = await create('Version', { code: 'secret' }, q.id, artist);
    const refused = await appErrorOf(create('Playlist', { name: 'r', versions: [ref(v1), ref(foreign)] }, p.id, artist));
    expect(refused.kind).toBe('invalid');
    expect(refused.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 1], type: 'link_project' })]);
    const list = await create('Playlist', { name: 'r', versions: [ref(v1)] }, p.id, artist);
    const err = await appErrorOf(patch('Playlist', list.id, { versions: [ref(foreign), ref(v2)] }, admin));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    const moved = await appErrorOf(client.call.updateRecord({ entityType: 'Playlist', id: list.id, projectId: { value: q.id } }, admin));
    expect(moved.problems).toEqual([expect.objectContaining({ loc: ['data', 'versions', 0], type: 'link_project' })]);
    expect(data((await patch('Playlist', list.id, { versions: [ref(v2), ref(v1)] }, artist)).record!).versions).toEqual([ref(v2), ref(v1)]);
  });

  it('while a share link is live, changes only for Admin, Supervisor and Coordinator; revoked or expired links do not count', async () => {
    const p = await create('Project', { name: 'Shared', code: 'shared' }, undefined);
    const [v1, v2] = [await create('Version', { code: 'v1' }, p.id, artist), await create('Version', { code: 'v2' }, p.id, artist)];
    const list = await create('Playlist', { name: 'client', versions: [ref(v1)] }, p.id, artist);
    const { link } = await client.call.createShareLink({ playlistId: list.id, canComment: true }, coordinator);
    for (const ctx of [artist, as('Viewer')]) {
      expect((await appErrorOf(patch('Playlist', list.id, { versions: [ref(v1), ref(v2)] }, ctx))).kind).toBe('forbidden');
    }
    // Its name is not what the link shows; nothing else is refused.
    await patch('Playlist', list.id, { name: 'client, round 2' }, artist);
    for (const role of ['Admin', 'Supervisor', 'Coordinator'] as const) await patch('Playlist', list.id, { versions: [ref(v2), ref(v1)] }, as(role));
    expect(data((await client.call.getRecord({ entityType: 'Playlist', id: list.id }, artist)).record!).versions).toEqual([ref(v2), ref(v1)]);

    await client.call.revokeShareLink({ token: link!.id }, coordinator);
    await patch('Playlist', list.id, { versions: [ref(v1)] }, artist);
    const timed = await client.call.createShareLink(
      { playlistId: list.id, canComment: true, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      admin,
    );
    expect((await appErrorOf(patch('Playlist', list.id, { versions: [] }, artist))).kind).toBe('forbidden');
    await sql.query(`update records.share_link set expires_at = now() - interval '1 second' where id = $1`, [timed.link!.id]);
    expect(data((await patch('Playlist', list.id, { versions: [] }, artist)).record!).versions).toEqual([]);
  });
});

describe('Playlist versions and a link made at the same moment', () => {
  it('serialise on the Playlist row: a link waits for a change in flight, and a change waiting for a link sees it', async () => {
    const p = await create('Project', { name: 'Race', code: 'race' }, undefined);
    const v = await create('Version', { code: 'v1' }, p.id, artist);
    const list = await create('Playlist', { name: 'race', versions: [ref(v)] }, p.id, artist);
    const settled = (promise: Promise<unknown>) => {
      const state = { done: false };
      promise.then(
        () => (state.done = true),
        () => (state.done = true),
      );
      return state;
    };
    // A versions change in flight holds the row for update: the link waits for it.
    await sql.query('begin');
    try {
      await sql.query('select 1 from records.record where id = $1 for update', [list.id]);
      const sharing = client.call.createShareLink({ playlistId: list.id, canComment: true }, coordinator);
      const state = settled(sharing);
      await new Promise((r) => setTimeout(r, 400));
      expect(state.done).toBe(false);
      await sql.query('commit');
      await sharing;
    } catch (err) {
      await sql.query('rollback');
      throw err;
    }
    // A link being made holds the row for key share: a change waits, then sees the link.
    await client.call.revokeShareLink({ token: (await client.call.listShareLinks({ playlistId: list.id }, admin)).links[0]!.id }, admin);
    await sql.query('begin');
    try {
      await sql.query('select 1 from records.record where id = $1 for key share', [list.id]);
      await sql.query(
        `insert into records.share_link (id, playlist_id, token_digest, token_prefix, can_comment) values ($1, $2, decode(repeat('ab', 32), 'hex'), 'abcdef', true)`,
        [newId(), list.id],
      );
      const change = appErrorOf(patch('Playlist', list.id, { versions: [] }, artist));
      await new Promise((r) => setTimeout(r, 400));
      await sql.query('commit');
      expect((await change).kind).toBe('forbidden');
    } catch (err) {
      await sql.query('rollback');
      throw err;
    }
  });
});

describe('Representation transcode fields', () => {
  it('are written only through the media service: for the uploader, for itself; a person or another service gets 403', async () => {
    const p = await create('Project', { name: 'Media', code: 'media' }, undefined);
    const v = await create('Version', { code: 'v1' }, p.id, artist);
    const viewer = as('Viewer');
    const published = await create('Representation', { name: 'plate', version: ref(v), files: { exr: '/x' } }, p.id, viewer);
    const fields = { transcode_status: 'pending', attempts: 0 };
    for (const ctx of [viewer, admin, { requestId: 's', principal: { userId: '', role: 'Service' as const, authKind: 'service' as const } }]) {
      expect((await appErrorOf(create('Representation', { name: 'x', ...fields }, p.id, ctx))).kind).toBe('forbidden');
      expect((await appErrorOf(patch('Representation', published.id, { transcode_status: 'failed' }, ctx))).kind).toBe('forbidden');
    }
    const upload = await create('Representation', { name: 'up.mov', version: ref(v), ...fields }, p.id, {
      ...viewer,
      principal: { ...viewer.principal!, via: MEDIA_SERVICE },
    });
    expect(upload.createdBy).toBe(viewer.principal!.userId);
    const job: CallContext = { requestId: 'job', principal: { userId: '', role: 'Service', authKind: 'service', via: MEDIA_SERVICE } };
    expect(data((await patch('Representation', upload.id, { transcode_status: 'done', review_kind: 'video' }, job)).record!)).toMatchObject({
      transcode_status: 'done',
      review_kind: 'video',
    });
  });
});

describe('Notes', () => {
  it('get their writer as author; a guest note is never edited and only retired by Admin, Supervisor or Coordinator', async () => {
    const p = await create('Project', { name: 'Notes', code: 'notes' }, undefined);
    const v = await create('Version', { code: 'v1' }, p.id, artist);
    const list = await create('Playlist', { name: 'n', versions: [ref(v)] }, p.id, coordinator);
    const mine = await create('Note', { content: 'mine', links: [ref(v)] }, p.id, artist);
    expect(data(mine).author).toEqual({ type: 'User', id: artist.principal!.userId });
    expect((await appErrorOf(create('Note', { content: 'x', author: { type: 'User', id: newId() } }, p.id, artist))).kind).toBe('forbidden');
    expect((await appErrorOf(create('Note', { content: 'x', verdict: 'approve' }, p.id, admin))).kind).toBe('forbidden');
    expect((await appErrorOf(patch('Note', mine.id, { content: 'x' }, as('Artist')))).kind).toBe('forbidden');
    expect(data((await patch('Note', mine.id, { content: 'tidied' }, as('Supervisor'))).record!).content).toBe('tidied');

    const { token } = await client.call.createShareLink({ playlistId: list.id, canComment: true }, coordinator);
    const { note } = await client.call.createGuestNote({ token, versionId: v.id, comment: 'ok', verdict: 'approve', guestName: 'Client' }, { requestId: 'g' });
    expect(data(note!)).toMatchObject({ verdict: 'approve', guest_name: 'Client' });
    expect(data(note!).author).toBeUndefined();
    for (const ctx of [admin, as('Supervisor'), coordinator])
      expect((await appErrorOf(patch('Note', note!.id, { verdict: 'needs-changes' }, ctx))).kind).toBe('forbidden');
    for (const ctx of [admin, coordinator]) expect((await appErrorOf(patch('Note', note!.id, { content: 'softened' }, ctx))).kind).toBe('forbidden');
    expect((await appErrorOf(client.call.retireRecord({ entityType: 'Note', id: note!.id }, artist))).kind).toBe('forbidden');
    await client.call.retireRecord({ entityType: 'Note', id: note!.id }, coordinator);
    await client.call.reviveRecord({ entityType: 'Note', id: note!.id }, coordinator);
    expect(data((await client.call.getRecord({ entityType: 'Note', id: note!.id }, admin)).record!)).toMatchObject({ content: 'ok', verdict: 'approve' });
  });
});
