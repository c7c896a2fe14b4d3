/**
 * Who may write what a share link shows and who speaks for the client, against the whole stack
 * (docs/api-notes.md, "Roles and who may write"; docs/review.md): a shared Playlist's versions,
 * a Playlist's project, a Representation's transcode fields, a Note's author, verdict and
 * guest_name, and who edits or retires whose Note.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

describe('write rules of Playlist, Representation and Note (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let supervisor: Session;
  let coordinator: Session;
  let artist: Session;
  let viewer: Session;
  let projectId: string;
  let v1: any;
  let v2: any;
  let foreign: any;
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const link = (r: any) => ({ type: r.entity_type, id: r.id });
  const user = (s: Session) => ({ type: 'User', id: s.user.id });

  beforeAll(async () => {
    e = await startE2EStack('write-rules');
    admin = await bootstrapAdmin(e.api);
    supervisor = await createUser(admin.api, 'Supervisor', 'sue@studio.test');
    coordinator = await createUser(admin.api, 'Coordinator', 'cora@studio.test');
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    projectId = (await create(admin.api, 'Project', { data: { name: 'Rules', code: 'rules' } })).id;
    const otherProject = (await create(admin.api, 'Project', { data: { name: 'Secret', code: 'secret' } })).id;
    v1 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh010_v001' } });
    v2 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh020_v001' } });
    foreign = await create(artist.api, 'Version', { project_id: otherProject, data: { code: 'secret_v001' } });
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  it("a Playlist holds its own project's Versions (422 at the element); while shared only Admin, Supervisor, Coordinator change them", async () => {
    const bad = await artist.api.post('/entities/Playlist', { project_id: projectId, data: { name: 'mix', versions: [link(v1), link(foreign)] } });
    expectValidation(bad, ['body', 'data', 'versions', 1]);
    expect(bad.body.detail[0].type).toBe('link_project');
    const playlist = await create(artist.api, 'Playlist', { project_id: projectId, data: { name: 'Client review', versions: [link(v1)] } });
    expectValidation(await artist.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(foreign)] } }), ['body', 'data', 'versions', 0]);
    // Not shared yet: an Artist edits it.
    expectStatus(await artist.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(v1), link(v2)] } }), 200);

    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, {}), 200, 'share');
    for (const s of [artist, viewer]) {
      expectError(await s.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(v2)] } }), 403, 'forbidden');
      // 403 before the body's 422, a cross-project version included.
      expectError(await s.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(foreign)] } }), 403, 'forbidden');
    }
    expectStatus(await artist.api.patch(`/entities/Playlist/${playlist.id}`, { data: { name: 'Client review, round 1' } }), 200);
    const shown = () => e.api.as(null).get(`/shared/${made.token}`);
    expect(expectStatus(await shown(), 200).versions.map((v: any) => v.id)).toEqual([v1.id, v2.id]);
    // Who may share may change what it shows, within the project only.
    expectValidation(await coordinator.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(foreign)] } }), [
      'body',
      'data',
      'versions',
      0,
    ]);
    expectStatus(await supervisor.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(v2)] } }), 200);
    expect(expectStatus(await shown(), 200).versions.map((v: any) => v.id)).toEqual([v2.id]);
    // Once the link is revoked the Playlist is the team's again.
    expectStatus(await coordinator.api.delete(`/share/${made.token}`), 200);
    expectStatus(await artist.api.patch(`/entities/Playlist/${playlist.id}`, { data: { versions: [link(v1)] } }), 200);
  });

  it('a Representation: every role publishes name, version and files; no person writes a transcode field', async () => {
    const files = { exr: { path: '/renders/sh010/v001.####.exr', frames: '1001-1100' } };
    const rep = await create(viewer.api, 'Representation', { project_id: projectId, data: { name: 'exr', version: link(v1), files } });
    expect(rep.data).toEqual({ name: 'exr', version: link(v1), files });
    for (const s of [viewer, artist, admin]) {
      expectError(await s.api.patch(`/entities/Representation/${rep.id}`, { data: { transcode_status: 'done' } }), 403, 'forbidden');
      expectError(
        await s.api.patch(`/entities/Representation/${rep.id}`, { data: { review_media_key: `rv/${'a'.repeat(32)}/original.mov` } }),
        403,
        'forbidden',
      );
      const faked = {
        project_id: projectId,
        data: { name: 'x', version: link(v1), transcode_status: 'done', thumbnail_media_key: `rv/${'b'.repeat(32)}/thumb.jpg` },
      };
      expectError(await s.api.post('/entities/Representation', faked), 403, 'forbidden');
    }
    // 403 before validation: an unknown key beside a transcode field is not a 422.
    expectError(await viewer.api.patch(`/entities/Representation/${rep.id}`, { data: { attempts: 0 }, nope: 1 }), 403, 'forbidden');
    expect(expectStatus(await viewer.api.get(`/entities/Representation/${rep.id}`), 200).data).toEqual({ name: 'exr', version: link(v1), files });
  });

  it('a Note: its author is the caller; verdict and guest_name only from a share link; edited by its author, Admin or Supervisor', async () => {
    const note = await create(artist.api, 'Note', { project_id: projectId, data: { content: 'edge flicker', links: [link(v1)] } });
    expect(note.data.author).toEqual(user(artist));
    expect((await create(artist.api, 'Note', { project_id: projectId, data: { content: 'me', author: user(artist) } })).data.author).toEqual(user(artist));
    for (const s of [artist, admin]) {
      expectError(await s.api.post('/entities/Note', { project_id: projectId, data: { content: 'x', author: user(viewer) } }), 403, 'forbidden');
      expectError(
        await s.api.post('/entities/Note', { project_id: projectId, data: { content: 'ok!', verdict: 'approve', links: [link(v1)] } }),
        403,
        'forbidden',
      );
      expectError(await s.api.post('/entities/Note', { project_id: projectId, data: { content: 'ok!', guest_name: 'Client' } }), 403, 'forbidden');
    }
    expectError(await artist.api.patch(`/entities/Note/${note.id}`, { data: { author: user(viewer) } }), 403, 'forbidden');
    expectError(await artist.api.patch(`/entities/Note/${note.id}`, { data: { verdict: 'approve' } }), 403, 'forbidden');

    const other = await createUser(admin.api, 'Artist', 'bo@studio.test');
    for (const s of [other, coordinator, viewer]) {
      expectError(await s.api.patch(`/entities/Note/${note.id}`, { data: { content: 'rewritten' } }), 403, 'forbidden');
      expectError(await s.api.delete(`/entities/Note/${note.id}`), 403, 'forbidden');
    }
    expectStatus(await artist.api.patch(`/entities/Note/${note.id}`, { data: { content: 'edge flicker, frames 1010-1020' } }), 200);
    const bySupervisor = expectStatus(await supervisor.api.patch(`/entities/Note/${note.id}`, { data: { content: 'edge flicker (fixed in v002)' } }), 200);
    expect(bySupervisor.data.author).toEqual(user(artist));
    expectStatus(await supervisor.api.delete(`/entities/Note/${note.id}`), 200);
    expectError(await other.api.post(`/entities/Note/${note.id}/revive`), 403, 'forbidden');
    expectStatus(await artist.api.post(`/entities/Note/${note.id}/revive`), 200);
  });

  it("a guest's note is never edited, Admin included, and only retired by Admin, Supervisor or Coordinator", async () => {
    const playlist = await create(coordinator.api, 'Playlist', { project_id: projectId, data: { name: 'Dailies', versions: [link(v1)] } });
    const made = expectStatus(await coordinator.api.post(`/playlists/${playlist.id}/share`, {}), 200, 'share');
    const verdict = expectStatus(
      await e.api.as(null).post(`/shared/${made.token}/notes`, { version_id: v1.id, comment: 'Approved', guest_name: 'Client Carla', verdict: 'approve' }),
      200,
    );
    for (const s of [admin, supervisor, coordinator, artist]) {
      expectError(await s.api.patch(`/entities/Note/${verdict.id}`, { data: { content: 'Approved with changes' } }), 403, 'forbidden');
    }
    expectError(await admin.api.patch(`/entities/Note/${verdict.id}`, { data: { verdict: 'needs-changes' } }), 403, 'forbidden');
    for (const s of [artist, viewer]) expectError(await s.api.delete(`/entities/Note/${verdict.id}`), 403, 'forbidden');
    expectStatus(await coordinator.api.delete(`/entities/Note/${verdict.id}`), 200);
    expectError(await artist.api.post(`/entities/Note/${verdict.id}/revive`), 403, 'forbidden');
    const back = expectStatus(await coordinator.api.post(`/entities/Note/${verdict.id}/revive`), 200);
    expect(back.data).toMatchObject({ content: 'Approved', verdict: 'approve', guest_name: 'Client Carla' });
    expect(back.data.author).toBeUndefined();
  });
});
