/**
 * The share routes against fake peers: roles before validation, the calls made to records (guest
 * principal, password header), the branding and its fallback, per-link limits and the page's headers.
 */
import type { recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import { REVIEW_CSP } from '../review/review.assets.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PLAYLIST = '0190a0b0-0000-7000-8000-0000000000d1';
const VERSION = '0190a0b0-0000-7000-8000-0000000000d2';
const T = '2026-01-01T00:00:00.000000Z';
const record = (id: string, entityType: string, data: Record<string, unknown>): recordsv1.Record => ({
  id,
  entityType,
  active: true,
  createdAt: T,
  updatedAt: T,
  dataJson: JSON.stringify(data),
});

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000', SHARE_NOTES_PER_MINUTE: '3', SHARE_PASSWORD_FAILURES_PER_MINUTE: '2' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
  gw.state.shareVerifyMs = 0;
  gw.state.finished = new Map();
  gw.state.records.clear();
  gw.state.records.set(PLAYLIST, record(PLAYLIST, 'Playlist', { name: 'Dailies', versions: [{ type: 'Version', id: VERSION }] }));
  gw.state.records.set(VERSION, record(VERSION, 'Version', { code: 'v001' }));
  gw.state.schemaAnswers = new Map([
    ['getBranding', JSON.stringify({ studio_name: 'Blue Pencil', logo_media_key: null, primary_color: '#112233', accent_color: null })],
  ]);
});

const share = async (body: unknown = {}) => {
  const res = await call('POST', `/playlists/${PLAYLIST}/share`, { token: 'coordinator-token', body });
  expect(res.status, res.text).toBe(200);
  return res.json as { id: string; token: string; url: string };
};

describe('managing share links', () => {
  it('Artist and Viewer are refused before the body is read; managers reach records', async () => {
    for (const token of ['artist-token', 'viewer-token', 'svc_artist']) {
      expect((await call('POST', `/playlists/${PLAYLIST}/share`, { token, body: { nope: 1 } })).status).toBe(403);
      expect((await call('GET', `/playlists/${PLAYLIST}/share`, { token })).status).toBe(403);
      expect((await call('DELETE', '/share/abc', { token })).status).toBe(403);
    }
    expect(gw.state.calls.filter((c) => c.method !== 'authenticate')).toEqual([]);
    expect((await call('POST', `/playlists/${PLAYLIST}/share`, {})).status).toBe(401);
    for (const token of ['admin-token', 'supervisor-token', 'coordinator-token']) {
      const res = await call('POST', `/playlists/${PLAYLIST}/share`, { token, body: { password: 'pw', can_comment: false } });
      expect(res.status, res.text).toBe(200);
      expect(res.json.url).toBe(`${gw.url}/review/${res.json.token}`);
      expect(res.json).toMatchObject({ has_password: true, can_comment: false, playlist_id: PLAYLIST });
    }
    const created = gw.state.calls.find((c) => c.method === 'createShareLink')!;
    expect(created.req).toMatchObject({ playlistId: PLAYLIST, canComment: false, password: 'pw' });
    expect(
      (await call('POST', `/playlists/${PLAYLIST}/share`, { token: 'admin-token', body: { can_comment: 1, extra: true } })).json.detail.map((d: any) => d.loc),
    ).toEqual([
      ['body', 'can_comment'],
      ['body', 'extra'],
    ]);
  });
});

describe('PUBLIC_URL', () => {
  it('is the origin of new links when set', async () => {
    const other = await startTestGateway({ PUBLIC_URL: 'https://review.studio.example/' });
    try {
      other.state.records.set(PLAYLIST, record(PLAYLIST, 'Playlist', { name: 'Dailies', versions: [] }));
      const res = await httpClient(() => other.url)('POST', `/playlists/${PLAYLIST}/share`, { token: 'admin-token', body: {} });
      expect(res.json.url).toBe(`https://review.studio.example/review/${res.json.token}`);
    } finally {
      await other.stop();
    }
  });
});

describe('guest routes', () => {
  it('GET /shared/{token} needs no bearer token, passes the password and a guest principal, adds the branding', async () => {
    const { token } = await share({ password: 'pw' });
    expect((await call('GET', `/shared/${token}`)).json.code).toBe('password_required');
    const res = await call('GET', `/shared/${token}`, { headers: { 'x-share-password': 'pw' } });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.json).toMatchObject({ playlist: { id: PLAYLIST, name: 'Dailies' }, branding: { studio_name: 'Blue Pencil', primary_color: '#112233' } });
    const open = gw.state.calls.filter((c) => c.method === 'openShare').at(-1)!;
    expect(open.req).toEqual({ token, password: 'pw' });
    expect(open.ctx.principal).toEqual({ userId: '', role: 'Guest', authKind: 'guest' });
  });

  it('answers without branding when the schema service is down, and 503 when records is', async () => {
    const { token } = await share();
    gw.state.down.add('schema');
    const res = await call('GET', `/shared/${token}`);
    expect(res.status, res.text).toBe(200);
    expect(res.json.branding).toEqual({ studio_name: null, logo_media_key: null, primary_color: null, accent_color: null });
    gw.state.down.add('records');
    expect((await call('GET', `/shared/${token}`)).status).toBe(503);
  });

  it('wrong passwords are limited per link; then even the right one waits', async () => {
    const { token } = await share({ password: 'pw' });
    expect((await call('GET', `/shared/${token}`, { headers: { 'x-share-password': 'a' } })).status).toBe(401);
    expect((await call('GET', `/shared/${token}`, { headers: { 'x-share-password': 'b' } })).status).toBe(401);
    const limited = await call('GET', `/shared/${token}`, { headers: { 'x-share-password': 'pw' } });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('notes are limited per link before the body is validated; a bad verdict is 422 without a records call', async () => {
    const { token } = await share();
    const other = await share();
    const bad = await call('POST', `/shared/${token}/notes`, { body: { version_id: VERSION, comment: 'x', guest_name: 'G', verdict: 'maybe' } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['body', 'verdict']);
    expect(gw.state.calls.some((c) => c.method === 'createGuestNote')).toBe(false);
    const ok = await call('POST', `/shared/${token}/notes`, { body: { version_id: VERSION, comment: 'nice', guest_name: 'G', verdict: 'approve' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toMatchObject({ entity_type: 'Note', data: { guest_name: 'G', verdict: 'approve' } });
    expect((await call('POST', `/shared/${token}/notes`, { body: { version_id: VERSION, comment: 'again', guest_name: 'G' } })).status).toBe(200);
    const limited = await call('POST', `/shared/${token}/notes`, { body: { bad: true } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call('POST', `/shared/${other.token}/notes`, { body: { version_id: VERSION, comment: 'hi', guest_name: 'H' } })).status).toBe(200);
  });

  it('the page and its files carry the CSP; share tokens are cut in the request log', async () => {
    const { token } = await share();
    const page = await call('GET', `/review/${token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(REVIEW_CSP);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('<script type="module" src="/review-assets/review.js"></script>');
    const js = await call('GET', '/review-assets/review.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await call('GET', '/review-assets/x.js')).status).toBe(422);
    await call('GET', `/shared/${token}`);
    const text = gw.logs.text();
    expect(text).not.toContain(token);
    expect(text).toContain(`/review/${token.slice(0, 6)}[redacted]`);
  });
});

describe('share passwords: budget, sessions', () => {
  const pw = (password: string) => ({ headers: { 'x-share-password': password } });
  const verified = () => gw.state.calls.filter((c) => c.method === 'openShare' && (c.req as recordsv1.OpenShareRequest).password !== undefined).length;

  it('parallel wrong guesses are charged before they are verified: no more than the budget reach records', async () => {
    const { token } = await share({ password: 'pw' });
    gw.state.shareVerifyMs = 100;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call('GET', `/shared/${token}`, pw(`guess-${i}`))));
    const statuses = answers.map((a) => a.status).sort();
    // SHARE_PASSWORD_FAILURES_PER_MINUTE is 2 in this gateway.
    expect(statuses).toEqual([401, 401, ...Array(10).fill(429)]);
    expect(verified()).toBe(2);
    expect(Number(answers.find((a) => a.status === 429)!.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a right password is refunded: many correct opens never use up the budget', async () => {
    const { token } = await share({ password: 'pw' });
    expect((await call('GET', `/shared/${token}`, pw('wrong'))).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await call('GET', `/shared/${token}`, pw('pw'))).status).toBe(200);
    expect((await call('GET', `/shared/${token}`, pw('wrong'))).status).toBe(401);
    expect((await call('GET', `/shared/${token}`, pw('pw'))).status).toBe(429);
  });

  it('a correct password answers a session that stands in for it (no password sent again), bound to its link', async () => {
    const { token, id } = await share({ password: 'pw' });
    const other = await share({ password: 'pw' });
    const first = await call('GET', `/shared/${token}`, pw('pw'));
    expect(first.status).toBe(200);
    const session = first.headers.get('x-share-session')!;
    expect(session).toMatch(/^[A-Za-z0-9_-]{70}$/);
    expect(Date.parse(first.headers.get('x-share-session-expires')!)).toBeGreaterThan(Date.now() + 25 * 60_000);
    gw.state.calls.length = 0;
    const again = await call('GET', `/shared/${token}`, { headers: { 'x-share-session': session } });
    expect(again.status, again.text).toBe(200);
    expect(again.headers.get('x-share-session')).toBeNull();
    const open = gw.state.calls.find((c) => c.method === 'openShare')!;
    expect(open.req).toMatchObject({ token, sessionLinkId: id });
    expect((open.req as recordsv1.OpenShareRequest).password).toBeUndefined();
    const note = await call('POST', `/shared/${token}/notes`, {
      headers: { 'x-share-session': session },
      body: { version_id: VERSION, comment: 'ok', guest_name: 'G' },
    });
    expect(note.status, note.text).toBe(200);
    // Not a proof for another link, and a forged one is none at all.
    expect((await call('GET', `/shared/${other.token}`, { headers: { 'x-share-session': session } })).status).toBe(401);
    expect((await call('GET', `/shared/${token}`, { headers: { 'x-share-session': `${session.slice(0, -2)}AA` } })).status).toBe(401);
    // Sessions are not held back by the password budget (the forged session and this guess use it up).
    expect((await call('GET', `/shared/${token}`, pw('wrong'))).status).toBe(401);
    expect((await call('GET', `/shared/${token}`, pw('pw'))).status).toBe(429);
    expect((await call('GET', `/shared/${token}`, { headers: { 'x-share-session': session } })).status).toBe(200);
    // Revoking the link ends the session at once.
    expect((await call('DELETE', `/share/${token}`, { token: 'admin-token' })).status).toBe(200);
    expect((await call('GET', `/shared/${token}`, { headers: { 'x-share-session': session } })).status).toBe(404);
    expect(gw.logs.text()).not.toContain(session);
  });
});

describe('guest media keys', () => {
  const PROXY = 'rv/00112233445566778899aabbccddeeff/proxy.mp4';
  const THUMB = 'rv/ffeeddccbbaa99887766554433221100/thumb.jpg';
  beforeEach(() => {
    gw.state.finished!.set(VERSION, { versionId: VERSION, reviewKind: 'video', proxyKey: PROXY, thumbnailKey: THUMB });
    gw.state.media!.set(PROXY, { contentType: 'video/mp4', data: Buffer.from('0123456789') });
    gw.state.media!.set(THUMB, { contentType: 'image/jpeg', data: Buffer.from('jpeg') });
  });

  it("come from media-transcode's finished outputs, are sealed for the link, and serve only while it is live", async () => {
    const { token } = await share();
    const res = await call('GET', `/shared/${token}`);
    expect(res.status, res.text).toBe(200);
    expect(gw.state.calls.find((c) => c.method === 'finishedOutputs')!.req).toEqual({ versionIds: [VERSION] });
    const v = res.json.versions[0];
    expect(v.review_kind).toBe('video');
    expect(v.review_media_key).toMatch(/^sh\/[A-Za-z0-9_-]{86}\/proxy\.mp4$/);
    expect(v.thumbnail_media_key).toMatch(/^sh\/[A-Za-z0-9_-]{86}\/thumb\.jpg$/);
    expect(res.text).not.toContain('rv/');
    expect(Date.parse(res.json.media_expires_at)).toBeGreaterThan(Date.now() + 3 * 3600_000);

    const proxy = await call('GET', `/media/${v.review_media_key}`);
    expect(proxy.status).toBe(200);
    expect(proxy.text).toBe('0123456789');
    expect(proxy.headers.get('content-type')).toBe('video/mp4');
    expect(proxy.headers.get('x-content-type-options')).toBe('nosniff');
    expect(proxy.headers.get('cache-control')).toBe('no-store');
    const range = await call('GET', `/media/${v.review_media_key}`, { headers: { range: 'bytes=2-4' } });
    expect(range.status).toBe(206);
    expect(range.text).toBe('234');
    expect(range.headers.get('content-range')).toBe('bytes 2-4/10');
    expect((await call('GET', `/media/${v.thumbnail_media_key}`)).headers.get('content-type')).toBe('image/jpeg');
    // Altered keys and the key under another name open nothing.
    const sealed = v.review_media_key.split('/')[1] as string;
    expect((await call('GET', `/media/sh/${sealed.slice(0, 40)}${sealed[40] === 'A' ? 'B' : 'A'}${sealed.slice(41)}/proxy.mp4`)).status).toBe(404);
    expect((await call('GET', `/media/sh/${sealed}/thumb.jpg`)).status).toBe(404);
    expect((await call('GET', `/media/sh/${sealed}/original.mov`)).status).toBe(404);
    expect(gw.logs.text()).not.toContain(sealed);

    expect((await call('DELETE', `/share/${token}`, { token: 'admin-token' })).status).toBe(200);
    const gone = await call('GET', `/media/${v.review_media_key}`);
    expect(gone.status).toBe(404);
    expect(gone.json.code).toBe('not_found');
    expect((await call('GET', `/media/${v.thumbnail_media_key}`)).status).toBe(404);
  });

  it('hostile guest keys and sessions are refused as 400, 401 or 404, never 5xx', async () => {
    const { token } = await share({ password: 'pw' });
    const opened = await call('GET', `/shared/${token}`, { headers: { 'x-share-password': 'pw' } });
    const key = opened.json.versions[0].review_media_key as string;
    const session = opened.headers.get('x-share-session')!;
    const sealed = key.split('/')[1]!;
    const keys = [
      `sh/${'A'.repeat(86)}/proxy.mp4`,
      `sh/${sealed}/proxy.jpg`,
      `sh/${sealed}/%2e%2e`,
      `sh/${sealed}/..%2f..%2fetc%2fpasswd`,
      `sh/${sealed}%00/proxy.mp4`,
      `sh/${sealed.slice(1)}/proxy.mp4`,
      `sh/${sealed}A/proxy.mp4`,
      `sh/${sealed}/${'x'.repeat(5000)}`,
      `sh/${'é'.repeat(43)}/proxy.mp4`,
      `sh//proxy.mp4`,
      'sh',
      ...Array.from({ length: 50 }, (_, i) => `sh/${Buffer.alloc(64, i).toString('base64url')}/thumb.jpg`),
    ];
    const sessions = [
      '',
      'x'.repeat(70),
      `${session}=`,
      session.toLowerCase(),
      Buffer.alloc(52).toString('base64url'),
      'é'.repeat(35),
      'A'.repeat(8000),
      ...Array.from({ length: 50 }, (_, i) => Buffer.alloc(52, i).toString('base64url')),
    ];
    const statuses: number[] = [];
    for (const k of keys) statuses.push((await call('GET', `/media/${k}`)).status);
    for (const sess of sessions) {
      statuses.push((await call('GET', `/shared/${token}`, { headers: { 'x-share-session': sess } })).status);
    }
    expect(statuses.filter((st) => st >= 500)).toEqual([]);
    expect(new Set(statuses.filter((st) => ![400, 401, 404, 429].includes(st)))).toEqual(new Set());
    // None of them opened anything.
    expect(statuses.filter((st) => st === 200)).toEqual([]);
    expect(gw.logs.text()).not.toContain(session);
  });

  it('a version without a finished transcode, or media-transcode down, shows no keys', async () => {
    const { token } = await share();
    gw.state.finished!.clear();
    expect((await call('GET', `/shared/${token}`)).json.versions[0]).toMatchObject({ review_kind: null, review_media_key: null, thumbnail_media_key: null });
    gw.state.finished!.set(VERSION, { versionId: VERSION, reviewKind: 'video', proxyKey: PROXY, thumbnailKey: THUMB });
    gw.state.down.add('media');
    const res = await call('GET', `/shared/${token}`);
    expect(res.status).toBe(200);
    expect(res.json.versions[0].review_media_key).toBeNull();
  });
});
