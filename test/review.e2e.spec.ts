/**
 * Share links and guest notes against the whole stack (docs/review.md): who may create, list and
 * revoke links; what a guest sees; expiry, revocation, passwords, scope, can_comment, 422s and
 * the per-link limits; guest notes in a record's notes and in the event log; tokens kept out
 * of the logs and the database.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureFfmpeg } from '@reelbase/lib-testkit';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import { mediaWriter, type MediaWriter } from './support/media.writer.js';

const NOTES_PER_MINUTE = 8;
const PASSWORD_FAILURES_PER_MINUTE = 6;

describe('share links and guests (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let supervisor: Session;
  let coordinator: Session;
  let artist: Session;
  let viewer: Session;
  let projectId: string;
  let v1: any;
  let v2: any;
  let outsider: any;
  let playlist: any;
  let media: MediaWriter;
  const guest = () => e.api.as(null);
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const link = (r: any) => ({ type: r.entity_type, id: r.id });
  const share = async (s: Session, body: unknown = {}) => expectStatus(await s.api.post(`/playlists/${playlist.id}/share`, body), 200, 'share');

  beforeAll(async () => {
    e = await startE2EStack('review', {
      gateway: { SHARE_NOTES_PER_MINUTE: String(NOTES_PER_MINUTE), SHARE_PASSWORD_FAILURES_PER_MINUTE: String(PASSWORD_FAILURES_PER_MINUTE) },
    });
    admin = await bootstrapAdmin(e.api);
    supervisor = await createUser(admin.api, 'Supervisor', 'sue@studio.test');
    coordinator = await createUser(admin.api, 'Coordinator', 'cora@studio.test');
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    projectId = (await create(admin.api, 'Project', { data: { name: 'Review', code: 'review' } })).id;
    v1 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh010_comp_v001' } });
    v2 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh020_comp_v003' } });
    outsider = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh030_secret_v001' } });
    media = await mediaWriter(e.stack);
    playlist = await create(coordinator.api, 'Playlist', { project_id: projectId, data: { name: 'Client review 1', versions: [link(v1), link(v2)] } });
    expectStatus(
      await admin.api.call('PUT', '/branding', { body: { studio_name: 'Blue Pencil VFX', primary_color: '#112233', accent_color: '#ffcc00' } }),
      200,
    );
  }, 180_000);
  afterAll(async () => {
    media?.close();
    await e?.teardown();
  });

  it('Admin, Supervisor and Coordinator create, list and revoke links; Artist and Viewer 403; unknown playlist 404', async () => {
    for (const s of [admin, supervisor, coordinator]) {
      const made = await share(s, { can_comment: false });
      expect(made).toMatchObject({ playlist_id: playlist.id, can_comment: false, has_password: false, expires_at: null });
      expect(made.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(made.url).toBe(`${e.stack.url}/review/${made.token}`);
    }
    for (const s of [artist, viewer]) {
      expectError(await s.api.post(`/playlists/${playlist.id}/share`, {}), 403, 'forbidden');
      expectError(await s.api.get(`/playlists/${playlist.id}/share`), 403, 'forbidden');
      expectError(await s.api.delete('/share/whatever'), 403, 'forbidden');
    }
    // 403 before validation: an Artist with a bad body is still refused for the role.
    expectError(await artist.api.post(`/playlists/${playlist.id}/share`, { nope: 1 }), 403, 'forbidden');
    expectError(await e.api.post(`/playlists/${playlist.id}/share`, {}), 401, 'unauthenticated');
    expectError(await admin.api.post('/playlists/0190a0b0-0000-7000-8000-0000000000ff/share', {}), 404, 'not_found');
    expectError(await admin.api.post(`/playlists/${v1.id}/share`, {}), 404, 'not_found');
    expectError(await admin.api.get('/playlists/0190a0b0-0000-7000-8000-0000000000ff/share'), 404, 'not_found');
    expectValidation(await admin.api.post(`/playlists/${playlist.id}/share`, { can_comment: 'yes' }), ['body', 'can_comment']);
    expectValidation(await admin.api.post(`/playlists/${playlist.id}/share`, { expires_at: 'tomorrow' }), ['body', 'expires_at']);
    expectValidation(await admin.api.post(`/playlists/${playlist.id}/share`, { expires_at: '2001-01-01T00:00:00Z' }), ['body', 'expires_at']);
    expectValidation(await admin.api.post(`/playlists/${playlist.id}/share`, { password: '' }), ['body', 'password']);
    expectValidation(await admin.api.post(`/playlists/${playlist.id}/share`, { tokn: 'x' }), ['body', 'tokn']);
    expectValidation(await admin.api.post('/playlists/nope/share', {}), ['path', 'id']);

    const listed = expectStatus(await coordinator.api.get(`/playlists/${playlist.id}/share`), 200).items as any[];
    expect(listed).toHaveLength(3);
    for (const l of listed) {
      expect(Object.keys(l).sort()).toEqual(
        ['can_comment', 'created_at', 'created_by', 'expires_at', 'has_password', 'id', 'playlist_id', 'revoked_at', 'token_prefix'].sort(),
      );
      expect(l.token_prefix).toHaveLength(6);
    }
    expect(listed.map((l) => l.created_by)).toEqual([coordinator.user.id, supervisor.user.id, admin.user.id]);
  });

  it('a guest reads the playlist: versions in order with their notes, can_comment, expiry and branding, without a bearer token', async () => {
    const made = await share(coordinator, { expires_at: new Date(Date.now() + 3600_000).toISOString() });
    const staffNote = await create(supervisor.api, 'Note', { project_id: projectId, data: { content: 'Studio: tighten the edge', links: [link(v1)] } });
    const res = await guest().get(`/shared/${made.token}`);
    const body = expectStatus(res, 200, 'GET /shared');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(body.playlist).toEqual({ id: playlist.id, name: 'Client review 1' });
    expect(body.versions.map((v: any) => [v.id, v.code])).toEqual([
      [v1.id, 'sh010_comp_v001'],
      [v2.id, 'sh020_comp_v003'],
    ]);
    expect(body.versions[0]).toMatchObject({ review_media_key: null, thumbnail_media_key: null, status: null });
    expect(body.versions[0].notes.map((n: any) => n.id)).toEqual([staffNote.id]);
    expect(body.versions[1].notes).toEqual([]);
    expect(body.can_comment).toBe(true);
    expect(Date.parse(body.expires_at)).toBe(Date.parse(made.expires_at));
    expect(body.branding).toEqual({ studio_name: 'Blue Pencil VFX', logo_media_key: null, primary_color: '#112233', accent_color: '#ffcc00' });
    // The newest finished reviewable of a version is shown; a newer one still converting does not hide it.
    // Only the media service writes transcode fields: these are written as it writes them.
    const key = (n: string, f: string) => `rv/${n.repeat(32)}/${f}`;
    const rep = (status: string, n: string) =>
      media.createRepresentation(
        projectId,
        {
          name: `upload ${n}`,
          version: link(v2),
          transcode_status: status,
          review_kind: 'video',
          review_media_key: status === 'done' ? key(n, 'proxy.mp4') : null,
          thumbnail_media_key: status === 'done' ? key(n, 'thumb.jpg') : null,
        },
        artist.user.id,
      );
    await rep('done', 'a');
    await rep('done', 'b');
    await rep('pending', 'c');
    const retired = await rep('done', 'd');
    expectStatus(await artist.api.delete(`/entities/Representation/${retired.id}`), 200);
    // Guests are given media from the media service's own finished jobs, never from these records' fields.
    const withMedia = expectStatus(await guest().get(`/shared/${made.token}`), 200).versions[1];
    expect(withMedia).toMatchObject({ review_kind: null, review_media_key: null, thumbnail_media_key: null });

    // The outsider version is not shown, whatever the guest tries.
    expect(JSON.stringify(body)).not.toContain(outsider.id);
    // A bearer token is not needed, and a bad one does not matter either: the route is public.
    expectStatus(await guest().get(`/shared/${made.token}`, { token: 'not-a-token' }), 200);
  });

  it('unknown, revoked and expired links are 404; revocation takes effect at once, by token or by id', async () => {
    expectError(await guest().get('/shared/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found');
    expectError(await guest().get('/shared/short'), 404, 'not_found');
    const a = await share(admin);
    expectStatus(await guest().get(`/shared/${a.token}`), 200);
    const revoked = expectStatus(await supervisor.api.delete(`/share/${a.token}`), 200, 'revoke');
    expect(revoked.revoked_at).toEqual(expect.any(String));
    expectError(await guest().get(`/shared/${a.token}`), 404, 'not_found');
    expectError(await guest().post(`/shared/${a.token}/notes`, { version_id: v1.id, comment: 'late', guest_name: 'Cli' }), 404, 'not_found');
    // Revoking again keeps the first time.
    expect(expectStatus(await supervisor.api.delete(`/share/${a.token}`), 200).revoked_at).toBe(revoked.revoked_at);
    // By id, as listed.
    const b = await share(admin);
    expectStatus(await coordinator.api.delete(`/share/${b.id}`), 200, 'revoke by id');
    expectError(await guest().get(`/shared/${b.token}`), 404, 'not_found');
    expectError(await admin.api.delete('/share/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found');
    expectError(await admin.api.delete('/share/0190a0b0-0000-7000-8000-0000000000ff'), 404, 'not_found');

    const c = await share(admin, { expires_at: new Date(Date.now() + 1500).toISOString() });
    expectStatus(await guest().get(`/shared/${c.token}`), 200);
    await eventually(async () => ((await guest().get(`/shared/${c.token}`)).status === 404 ? true : undefined), 10_000, 'link expiry');
    expectError(await guest().post(`/shared/${c.token}/notes`, { version_id: v1.id, comment: 'late', guest_name: 'Cli' }), 404, 'not_found');
  });

  it('a password is required in x-share-password (401 password_required), stored only as a scrypt hash; wrong ones are limited per link', async () => {
    const made = await share(admin, { password: 'open sesame' });
    expect(made.has_password).toBe(true);
    expectError(await guest().get(`/shared/${made.token}`), 401, 'password_required');
    expectError(await guest().get(`/shared/${made.token}`, { headers: { 'x-share-password': 'open sesame!' } }), 401, 'password_required');
    expectStatus(await guest().get(`/shared/${made.token}`, { headers: { 'x-share-password': 'open sesame' } }), 200);
    const note = { version_id: v1.id, comment: 'with password', guest_name: 'Pat' };
    expectError(await guest().post(`/shared/${made.token}/notes`, note), 401, 'password_required');
    expectStatus(await guest().post(`/shared/${made.token}/notes`, note, { headers: { 'x-share-password': 'open sesame' } }), 200);

    // The database holds neither the token nor the password.
    const client = new pg.Client({ connectionString: e.db.url });
    await client.connect();
    try {
      const rows = (
        await client.query('select encode(token_digest, $2) as digest, password_hash from records.share_link where token_prefix = $1', [
          made.token.slice(0, 6),
          'hex',
        ])
      ).rows;
      expect(rows).toHaveLength(1);
      expect(rows[0].password_hash).toMatch(/^scrypt\$\d+\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
      expect(rows[0].password_hash).not.toContain('open sesame');
      const dump = JSON.stringify((await client.query('select * from records.share_link')).rows);
      expect(dump).not.toContain(made.token);
    } finally {
      await client.end();
    }

    // Wrong passwords are counted per link: past the budget even the right one waits (429 Retry-After).
    const brute = await share(admin, { password: 'right one' });
    let limited: Awaited<ReturnType<Api['get']>> | undefined;
    for (let i = 0; i < PASSWORD_FAILURES_PER_MINUTE + 2 && !limited; i += 1) {
      const res = await guest().get(`/shared/${brute.token}`, { headers: { 'x-share-password': `guess ${i}` } });
      if (res.status === 429) limited = res;
      else expectError(res, 401, 'password_required');
    }
    expect(limited, 'wrong passwords were never limited').toBeDefined();
    expectError(limited!, 429, 'rate_limited');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expectError(await guest().get(`/shared/${brute.token}`, { headers: { 'x-share-password': 'right one' } }), 429, 'rate_limited');
    // Another link is not affected.
    expectStatus(await guest().get(`/shared/${made.token}`, { headers: { 'x-share-password': 'open sesame' } }), 200);
  });

  it('guest notes: scope (403), can_comment (403), 422s, then a Note with guest_name and verdict, listed for the studio and logged as an event', async () => {
    const made = await share(coordinator);
    const url = `/shared/${made.token}/notes`;
    const from = (await eventsAfter(admin.api)).at(-1)?.id ?? 0;

    expectError(await guest().post(url, { version_id: outsider.id, comment: 'peek', guest_name: 'Cli' }), 403, 'forbidden');
    expectError(await guest().post(url, { version_id: '0190a0b0-0000-7000-8000-0000000000ff', comment: 'peek', guest_name: 'Cli' }), 403, 'forbidden');
    const readOnly = await share(coordinator, { can_comment: false });
    expectError(await guest().post(`/shared/${readOnly.token}/notes`, { version_id: v1.id, comment: 'hi', guest_name: 'Cli' }), 403, 'forbidden');

    // Refusals count against the link's note budget too, so the 422s go to a link of their own.
    const bad = `/shared/${(await share(coordinator)).token}/notes`;
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: 'hi', guest_name: 'Cli', verdict: 'love-it' }), ['body', 'verdict']);
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: 'hi', guest_name: 'Cli', verdict: 'APPROVE' }), ['body', 'verdict']);
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: '   ', guest_name: 'Cli' }), ['body', 'comment']);
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: 'hi' }), ['body', 'guest_name']);
    expectValidation(await guest().post(bad, { version_id: 'v1', comment: 'hi', guest_name: 'Cli' }), ['body', 'version_id']);
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: 'hi', guest_name: 'Cli', author: 'x' }), ['body', 'author']);
    expectValidation(await guest().post(bad, { version_id: v1.id, comment: 'x'.repeat(10_001), guest_name: 'Cli' }), ['body', 'comment']);

    const approve = expectStatus(await guest().post(url, { version_id: v1.id, comment: 'Looks great', guest_name: 'Client Carla', verdict: 'approve' }), 200);
    expect(approve).toMatchObject({
      entity_type: 'Note',
      project_id: projectId,
      created_by: null,
      data: { content: 'Looks great', verdict: 'approve', guest_name: 'Client Carla', links: [{ type: 'Version', id: v1.id }] },
    });
    expect(approve.data.author).toBeUndefined();
    const plain = expectStatus(
      await guest().post(url, { version_id: v2.id.toUpperCase(), comment: 'Grade is off', guest_name: 'Client Carla', verdict: 'needs-changes' }),
      200,
    );
    const noVerdict = expectStatus(await guest().post(url, { version_id: v2.id, comment: 'Also the sky', guest_name: 'Dan' }), 200);
    expect(noVerdict.data.verdict).toBeUndefined();

    // Studio users see them among the version's notes, oldest first.
    const notes = expectStatus(await artist.api.get(`/entities/Version/${v2.id}/notes`), 200).items as any[];
    expect(notes.map((n) => n.id)).toEqual([plain.id, noVerdict.id]);
    expect(notes[0].data).toMatchObject({ guest_name: 'Client Carla', verdict: 'needs-changes' });
    // And the guest sees them on the link.
    const seen = expectStatus(await guest().get(`/shared/${made.token}`), 200);
    expect(seen.versions[1].notes.map((n: any) => n.id)).toEqual([plain.id, noVerdict.id]);

    // Each is an ordinary Note event with no acting user and the guest's name.
    const events = await eventually(async () => {
      const evs = (await eventsAfter(admin.api, from)).filter((ev) => ev.entity_type === 'Note' && [approve.id, plain.id, noVerdict.id].includes(ev.entity_id));
      return evs.length === 3 ? evs : undefined;
    });
    for (const ev of events) {
      expect(ev).toMatchObject({ action: 'create', actor: null, project_id: projectId });
      expect(ev.changes.guest_name).toEqual(expect.any(String));
    }
    expect(events.find((ev) => ev.entity_id === approve.id).changes).toMatchObject({ verdict: 'approve', content: 'Looks great' });
  });

  it('guests reach only the proxy and thumbnail, through link-bound keys, and only while the link is live', async () => {
    // A 2-second render for v2, converted by the media service.
    const ff = ensureFfmpeg();
    const src = join(e.logDir, 'guest-media.mov');
    const made = spawnSync(ff.ffmpeg, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=24:duration=2', '-pix_fmt', 'yuv420p', src], {
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
    const up = await fetch(`${e.stack.url}/versions/${v2.id}/reviewable`, {
      method: 'POST',
      headers: { authorization: `Bearer ${artist.token}`, 'content-type': 'video/quicktime', 'x-file-name': 'guest media.mov' },
      body: new Uint8Array(readFileSync(src)),
      signal: AbortSignal.timeout(60_000),
    });
    expect(up.status, await up.clone().text()).toBe(200);
    const done = await eventually(
      async () => {
        const r = expectStatus(await artist.api.get(`/versions/${v2.id}/reviewable`), 200);
        if (r.status === 'failed') throw new Error(`transcode failed: ${r.transcode_error}`);
        return r.status === 'done' ? r : undefined;
      },
      120_000,
      'the proxy of v2',
    );
    const rep = expectStatus(await artist.api.get(`/entities/Representation/${done.representation_id}`), 200);
    const originalKey: string = rep.data.files.original.key;
    // Every object has a random part of its own: the original's key is not derivable from the proxy's.
    const hex = (k: string) => k.split('/')[1];
    expect(new Set([hex(originalKey), hex(done.review_media_key), hex(done.thumbnail_media_key)]).size).toBe(3);

    const live = await share(coordinator);
    const soon = await share(coordinator, { expires_at: new Date(Date.now() + 6_000).toISOString() });
    const shared = expectStatus(await guest().get(`/shared/${live.token}`), 200);
    const v = shared.versions.find((x: any) => x.id === v2.id);
    expect(v.review_kind).toBe('video');
    expect(v.review_media_key).toMatch(/^sh\/[A-Za-z0-9_-]{86}\/proxy\.mp4$/);
    expect(v.thumbnail_media_key).toMatch(/^sh\/[A-Za-z0-9_-]{86}\/thumb\.jpg$/);
    // The guest never sees a real key.
    for (const k of [originalKey, done.review_media_key, done.thumbnail_media_key]) expect(JSON.stringify(shared)).not.toContain(hex(k));

    const media = (key: string, headers: Record<string, string> = {}) => fetch(`${e.stack.url}/media/${key}`, { headers, signal: AbortSignal.timeout(30_000) });
    const proxy = await media(v.review_media_key);
    expect(proxy.status).toBe(200);
    expect(proxy.headers.get('content-type')).toBe('video/mp4');
    expect(proxy.headers.get('x-content-type-options')).toBe('nosniff');
    expect(proxy.headers.get('etag')).toBeTruthy();
    const whole = Buffer.from(await proxy.arrayBuffer());
    expect(whole.indexOf('ftyp')).toBe(4);
    const range = await media(v.review_media_key, { range: 'bytes=100-199' });
    expect(range.status).toBe(206);
    expect(range.headers.get('content-range')).toBe(`bytes 100-199/${whole.length}`);
    expect(Buffer.from(await range.arrayBuffer()).equals(whole.subarray(100, 200))).toBe(true);
    const thumb = await media(v.thumbnail_media_key);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toBe('image/jpeg');
    // Guessing the master next to the proxy finds nothing.
    for (const guess of ['original.mov', 'original.mp4', 'original']) {
      expect((await media(`rv/${hex(done.review_media_key)}/${guess}`)).status, guess).toBe(404);
    }
    for (const guess of ['original.mov', 'original']) expect((await media(`sh/${v.review_media_key.split('/')[1]}/${guess}`)).status, guess).toBe(404);

    // Revoked: the very same keys answer 404 at once.
    expectStatus(await coordinator.api.delete(`/share/${live.token}`), 200);
    expect((await media(v.review_media_key)).status).toBe(404);
    expect((await media(v.thumbnail_media_key)).status).toBe(404);

    // Expired: likewise.
    const soonKey = expectStatus(await guest().get(`/shared/${soon.token}`), 200).versions.find((x: any) => x.id === v2.id).review_media_key;
    expect((await media(soonKey)).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon.expires_at) - Date.now()) + 500));
    expect((await media(soonKey)).status).toBe(404);
  }, 180_000);

  it('parallel wrong passwords are charged before scrypt runs; a correct one answers a session used instead of it', async () => {
    const raced = await share(admin, { password: 'race me' });
    const guesses = await Promise.all(
      Array.from({ length: 3 * PASSWORD_FAILURES_PER_MINUTE }, (_, i) =>
        guest().get(`/shared/${raced.token}`, { headers: { 'x-share-password': `parallel guess ${i}` } }),
      ),
    );
    const statuses = guesses.map((g) => g.status);
    expect(
      statuses.every((st) => st === 401 || st === 429),
      statuses.join(','),
    ).toBe(true);
    // No more guesses were verified (401) than the budget allows, however many arrived at once.
    expect(statuses.filter((st) => st === 401).length).toBeLessThanOrEqual(PASSWORD_FAILURES_PER_MINUTE);
    expect(statuses.filter((st) => st === 429).length).toBeGreaterThanOrEqual(2 * PASSWORD_FAILURES_PER_MINUTE);

    const locked = await share(admin, { password: 'session please' });
    const first = await guest().get(`/shared/${locked.token}`, { headers: { 'x-share-password': 'session please' } });
    expectStatus(first, 200);
    const session = first.headers.get('x-share-session')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{70}$/);
    const withSession = { headers: { 'x-share-session': session } };
    expectStatus(await guest().get(`/shared/${locked.token}`, withSession), 200);
    expectStatus(await guest().post(`/shared/${locked.token}/notes`, { version_id: v1.id, comment: 'via session', guest_name: 'Sam' }, withSession), 200);
    // The session is no password for another link.
    expectError(await guest().get(`/shared/${raced.token}`, withSession), 401, 'password_required');
    // Wrong guesses use up the link's password budget; the session does not go through it.
    for (let i = 0; i < PASSWORD_FAILURES_PER_MINUTE; i += 1) {
      await guest().get(`/shared/${locked.token}`, { headers: { 'x-share-password': `nope ${i}` } });
    }
    expectError(await guest().get(`/shared/${locked.token}`, { headers: { 'x-share-password': 'session please' } }), 429, 'rate_limited');
    expectStatus(await guest().get(`/shared/${locked.token}`, withSession), 200);
    // Revoked: the session ends with the link.
    expectStatus(await admin.api.delete(`/share/${locked.token}`), 200);
    expectError(await guest().get(`/shared/${locked.token}`, withSession), 404, 'not_found');
    await new Promise((r) => setTimeout(r, 300));
    for (const svc of ['gateway', 'records']) expect(readFileSync(join(e.logDir, `${svc}.log`), 'utf8'), `${svc}.log`).not.toContain(session);
  });

  it('a retired version or playlist is no longer shared', async () => {
    const v3 = await create(artist.api, 'Version', { project_id: projectId, data: { code: 'sh040_v001' } });
    const pl = await create(coordinator.api, 'Playlist', { project_id: projectId, data: { name: 'Short', versions: [link(v3)] } });
    const made = expectStatus(await coordinator.api.post(`/playlists/${pl.id}/share`, {}), 200);
    expectStatus(await artist.api.delete(`/entities/Version/${v3.id}`), 200);
    expect(expectStatus(await guest().get(`/shared/${made.token}`), 200).versions).toEqual([]);
    expectError(await guest().post(`/shared/${made.token}/notes`, { version_id: v3.id, comment: 'hi', guest_name: 'Cli' }), 403, 'forbidden');
    expectStatus(await coordinator.api.delete(`/entities/Playlist/${pl.id}`), 200);
    expectError(await guest().get(`/shared/${made.token}`), 404, 'not_found');
  });

  it('guest notes are limited per link (429 with Retry-After) without touching other links', async () => {
    const busy = await share(coordinator);
    const calm = await share(coordinator);
    const post = (token: string, i: number) => guest().post(`/shared/${token}/notes`, { version_id: v1.id, comment: `note ${i}`, guest_name: 'Flood' });
    let limited: Awaited<ReturnType<Api['post']>> | undefined;
    for (let i = 0; i < NOTES_PER_MINUTE + 2 && !limited; i += 1) {
      const res = await post(busy.token, i);
      if (res.status === 429) limited = res;
      else expectStatus(res, 200);
    }
    expect(limited, 'notes were never limited').toBeDefined();
    expectError(limited!, 429, 'rate_limited');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Counted before the body: an invalid body is refused 429 too while the link is limited.
    expectError(await guest().post(`/shared/${busy.token}/notes`, { bad: 1 }), 429, 'rate_limited');
    expectStatus(await post(calm.token, 0), 200);
  });

  it('the share token never reaches the logs in full', async () => {
    const made = await share(admin);
    expectStatus(await guest().get(`/shared/${made.token}`), 200);
    expectStatus(await guest().get(`/review/${made.token}`), 200);
    expectStatus(await admin.api.delete(`/share/${made.token}`), 200);
    await new Promise((r) => setTimeout(r, 300));
    for (const svc of ['gateway', 'records']) {
      const log = readFileSync(join(e.logDir, `${svc}.log`), 'utf8');
      expect(log, `${svc}.log`).not.toContain(made.token);
    }
    const gw = readFileSync(join(e.logDir, 'gateway.log'), 'utf8');
    expect(gw).toContain(`/shared/${made.token.slice(0, 6)}[redacted]`);
  });

  it('the review page is served with a strict CSP, nosniff and no-referrer, and its files from the same origin', async () => {
    const made = await share(admin);
    const res = await guest().get(`/review/${made.token}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.text).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
    expect(res.text).not.toMatch(/\sstyle=|<style/i);
    const js = await guest().get('/review-assets/review.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.text).not.toContain('innerHTML');
    expect((await guest().get('/review-assets/review.css')).headers.get('content-type')).toMatch(/^text\/css/);
    expectValidation(await guest().get('/review-assets/other.js'), ['path', 'file']);
  });
});
