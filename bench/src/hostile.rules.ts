/**
 * The hostile probe's checks of who may change what a client sees and of the inputs that once
 * broke the internal hop (docs/api-notes.md, "Who may write"; docs/review.md, "Security
 * decisions"): roles writing transcode fields, verdicts and authors; a shared Playlist changed by an
 * Artist; parallel share-password guesses; a guest guessing the master next to the proxy and
 * keeping media past revocation; huge and numerous `data` keys; empty and malformed `If-Match`;
 * huge, deep, recursive and backtracking addon schemas and 1 MB addon settings.
 * Every answer goes through the probe's own `send`, so a 5xx or a broken error shape is counted
 * there; what this file adds are rule breaches, counted as problems.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureFfmpeg } from '@reelbase/lib-testkit';

export interface Answer {
  status: number;
  body: string;
  headers: Headers;
}

export interface ProbeContext {
  base: string;
  adminToken: string;
  projectId: string;
  /** A scratch folder for the clip. */
  dir: string;
  send: (label: string, path: string, init?: RequestInit) => Promise<Answer>;
  problem: (what: string) => void;
  log: (line: string) => void;
}

/** Secrets this part made, for the log scan. */
export type Secrets = Record<string, string>;

export const parse = (a: Answer): any => {
  try {
    return JSON.parse(a.body);
  } catch {
    return undefined;
  }
};

/**
 * The two helpers every part of the probe uses: `call` sends a request (a JSON body unless a string is
 * given) through the probe's `send`; `expect` counts an answer of another status as a problem and
 * answers the parsed body.
 */
export function probeCalls(ctx: ProbeContext) {
  const call = (label: string, method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}) =>
    ctx.send(label, path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const expect = (a: Answer, want: number[], what: string): any => {
    if (!want.includes(a.status)) ctx.problem(`${what}: answered ${a.status}, expected ${want.join(' or ')} (${a.body.slice(0, 120)})`);
    return parse(a);
  };
  return { call, expect };
}

export async function probeRules(ctx: ProbeContext): Promise<Secrets> {
  const { send, problem } = ctx;
  const { call, expect } = probeCalls(ctx);
  const admin = ctx.adminToken;
  const pid = ctx.projectId;

  ctx.log('rules: users of each role');
  const users: Record<string, { id: string; token: string }> = {};
  for (const role of ['Supervisor', 'Coordinator', 'Artist', 'Viewer']) {
    const email = `${role.toLowerCase()}@hostile.test`;
    const made = parse(await call(`register ${role}`, 'POST', '/auth/register', admin, { email, password: 'password-123', name: role, role }));
    const login = parse(await call(`login ${role}`, 'POST', '/auth/login', null, { email, password: 'password-123' }));
    users[role] = { id: made?.user?.id ?? '', token: login?.access_token ?? '' };
  }
  const artist = users.Artist!;
  const viewer = users.Viewer!;
  const coordinator = users.Coordinator!;

  ctx.log('rules: inputs that once broke the internal hop');
  expect(
    await call('data key of 100,000 characters', 'POST', '/entities/Shot', admin, { project_id: pid, data: { ['k'.repeat(100_000)]: 1 } }),
    [422, 413],
    'a 100,000-character data key',
  );
  const many = Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`unknown_${i}`, 1]));
  const manyAnswer = await call('40,000 unknown data keys', 'POST', '/entities/Shot', admin, { project_id: pid, data: many });
  const manyBody = expect(manyAnswer, [422, 413], '40,000 unknown data keys');
  if (manyAnswer.status === 422 && Array.isArray(manyBody?.detail) && manyBody.detail.length > 101)
    problem(`40,000 unknown keys listed ${manyBody.detail.length} problems`);

  ctx.log('rules: addon schemas and settings (docs/api-notes.md, "Addons")');
  const addonVersion = (schema: unknown) => ({ title: 'Hostile', settings_schema: schema, defaults: {} });
  const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
  expect(await call('addon schema of 5,000 settings', 'PUT', '/addons/hostile/versions/1.0.0', admin, addonVersion(wide)), [413, 422], 'a huge addon schema');
  let deep: unknown = { type: 'string' };
  for (let i = 0; i < 12; i++) deep = { type: 'object', properties: { a: deep } };
  expect(await call('addon schema 12 deep', 'PUT', '/addons/hostile/versions/1.0.0', admin, addonVersion(deep)), [422], 'a deeply nested addon schema');
  const recursive = { type: 'object', $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' } } } }, properties: { root: { $ref: '#' } } };
  expect(await call('addon schema with recursive $ref', 'PUT', '/addons/hostile/versions/1.0.0', admin, addonVersion(recursive)), [422], 'a recursive $ref');
  const evil = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
  expect(
    await call('addon schema with a backtracking pattern', 'PUT', '/addons/hostile/versions/1.0.0', admin, addonVersion(evil)),
    [422],
    'a backtracking pattern',
  );
  const overlap = { type: 'object', properties: { s: { type: 'string', pattern: '^(a|a)*$' } } };
  expect(
    await call('addon schema with an overlapping pattern', 'PUT', '/addons/hostile/versions/1.0.0', admin, addonVersion(overlap)),
    [200],
    'an overlapping pattern',
  );
  const t0 = Date.now();
  expect(
    await call('addon settings against the overlapping pattern', 'PUT', '/addons/hostile/settings', admin, { s: `${'a'.repeat(60_000)}!` }),
    [422],
    'a slow input',
  );
  if (Date.now() - t0 > 3_000) problem(`a settings check against an overlapping pattern took ${Date.now() - t0} ms`);
  expect(
    await call('addon settings of 1 MB', 'PUT', `/addons/hostile/settings?project_id=${pid}`, admin, { s: 'a'.repeat(1_048_576) }),
    [413],
    '1 MB of addon settings',
  );
  expect(await call('addon settings after', 'GET', '/addons/hostile/settings', admin), [200], 'resolved settings after hostile input');

  const shot = parse(await call('shot for If-Match', 'POST', '/entities/Shot', admin, { project_id: pid, data: { code: 'IFM' } }));
  for (const validator of ['""', '', 'W/"x"', 'garbage', '"2001-01-01T00:00:00.000000Z"']) {
    expect(
      await call(
        `If-Match ${JSON.stringify(validator)}`,
        'PATCH',
        `/entities/Shot/${shot?.id}`,
        admin,
        { data: { description: 'changed' } },
        { 'if-match': validator },
      ),
      [409],
      `PATCH with If-Match ${JSON.stringify(validator)}`,
    );
  }
  const after = parse(await call('shot after If-Match', 'GET', `/entities/Shot/${shot?.id}`, admin));
  if (after?.data?.description === 'changed') problem('a PATCH with an empty or malformed If-Match changed the record');

  ctx.log('rules: transcode fields, verdicts, authors');
  const version = parse(await call('version', 'POST', '/entities/Version', admin, { project_id: pid, data: { code: 'V1' } }));
  const vref = { type: 'Version', id: version?.id };
  expect(
    await call('viewer publishes a Representation', 'POST', '/entities/Representation', viewer.token, {
      project_id: pid,
      data: { name: 'plate', version: vref, files: [] },
    }),
    [200, 201],
    'a Viewer publishing a Representation',
  );
  for (const field of ['transcode_status', 'review_media_key', 'thumbnail_media_key', 'transcode_error', 'review_kind', 'attempts']) {
    const value = field === 'attempts' ? 1 : field === 'transcode_status' ? 'done' : field.endsWith('_key') ? `rv/${'0'.repeat(32)}/proxy.mp4` : 'x';
    for (const [role, u] of [
      ['Viewer', viewer],
      ['Artist', artist],
      ['Admin', { id: '', token: admin }],
    ] as const) {
      expect(
        await call(`${role} creates a Representation with ${field}`, 'POST', '/entities/Representation', u.token, {
          project_id: pid,
          data: { name: 'r', version: vref, [field]: value },
        }),
        [403],
        `${role} writing ${field} on create`,
      );
    }
  }
  const rep = parse(await call('representation', 'POST', '/entities/Representation', artist.token, { project_id: pid, data: { name: 'r', version: vref } }));
  expect(
    await call('viewer patches transcode_status', 'PATCH', `/entities/Representation/${rep?.id}`, viewer.token, { data: { transcode_status: 'failed' } }),
    [403],
    'a Viewer cancelling a transcode',
  );
  for (const [what, data] of [
    ['verdict', { verdict: 'approve' }],
    ['guest_name', { guest_name: 'Client' }],
    ['author', { author: { type: 'User', id: users.Supervisor!.id } }],
  ] as const) {
    expect(
      await call(`artist note with ${what}`, 'POST', '/entities/Note', artist.token, { project_id: pid, data: { content: 'x', links: [vref], ...data } }),
      [403],
      `an Artist's Note naming ${what}`,
    );
  }
  const adminNote = parse(await call('admin note', 'POST', '/entities/Note', admin, { project_id: pid, data: { content: 'by admin', links: [vref] } }));
  expect(
    await call('artist edits admin note', 'PATCH', `/entities/Note/${adminNote?.id}`, artist.token, { data: { content: 'edited' } }),
    [403],
    "an Artist editing another's Note",
  );
  expect(await call('artist retires admin note', 'DELETE', `/entities/Note/${adminNote?.id}`, artist.token), [403], "an Artist retiring another's Note");

  ctx.log('rules: a shared playlist and its guests');
  const other = parse(await call('other project', 'POST', '/entities/Project', admin, { data: { name: 'Other', code: 'OTHER' } }));
  const foreign = parse(await call('foreign version', 'POST', '/entities/Version', admin, { project_id: other?.id, data: { code: 'F1' } }));
  const playlist = parse(await call('playlist', 'POST', '/entities/Playlist', admin, { project_id: pid, data: { name: 'Dailies', versions: [vref] } }));
  expect(
    await call('playlist with a foreign version', 'PATCH', `/entities/Playlist/${playlist?.id}`, admin, {
      data: { versions: [vref, { type: 'Version', id: foreign?.id }] },
    }),
    [422],
    'a Playlist holding a Version of another project',
  );
  const sharePassword = `share-pass-${Date.now()}`;
  const link = parse(await call('share', 'POST', `/playlists/${playlist?.id}/share`, coordinator.token, { password: sharePassword }));
  const shareToken: string = link?.token ?? '';
  const v2 = parse(await call('version 2', 'POST', '/entities/Version', admin, { project_id: pid, data: { code: 'V2' } }));
  expect(
    await call('artist changes a shared playlist', 'PATCH', `/entities/Playlist/${playlist?.id}`, artist.token, {
      data: { versions: [vref, { type: 'Version', id: v2?.id }] },
    }),
    [403],
    "an Artist changing a shared Playlist's versions",
  );

  const guesses = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      call(`share password guess ${i}`, 'GET', `/shared/${shareToken}`, null, undefined, { 'x-share-password': `wrong-${i}` }),
    ),
  );
  const refused = guesses.filter((g) => g.status === 401).length;
  if (refused > 20) problem(`${refused} of 60 parallel wrong share passwords were verified (budget 20 a minute)`);
  if (guesses.some((g) => g.status === 200)) problem('a wrong share password was accepted');

  ctx.log('rules: a guest and the master');
  const ff = ensureFfmpeg(process.env, ctx.log);
  const clip = join(ctx.dir, 'hostile.mov');
  const made = spawnSync(ff.ffmpeg, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=24:duration=1', '-c:v', 'mpeg4', clip], {
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
  const upload = await send('upload a reviewable', `/versions/${version?.id}/reviewable`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'video/quicktime', 'x-file-name': 'master.mov' },
    body: await readFile(clip),
  });
  if (upload.status >= 400) problem(`upload answered ${upload.status}`);
  let reviewable: any;
  for (let i = 0; i < 120; i++) {
    reviewable = parse(await call('reviewable status', 'GET', `/versions/${version?.id}/reviewable`, admin));
    if (reviewable?.status === 'done' || reviewable?.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  if (reviewable?.status !== 'done') problem(`the reviewable ended ${String(reviewable?.status)}`);
  // A second, new link without a password (the first one's password budget is spent).
  const open = parse(await call('share without password', 'POST', `/playlists/${playlist?.id}/share`, coordinator.token, {}));
  const openToken: string = open?.token ?? '';
  const shared = parse(await call('guest view', 'GET', `/shared/${openToken}`, null));
  const seen = (shared?.versions ?? []).find((v: any) => v.id === version?.id);
  const guestKeys = [seen?.review_media_key, seen?.thumbnail_media_key].filter((k): k is string => typeof k === 'string');
  if (guestKeys.length !== 2) problem(`the guest got ${guestKeys.length} of 2 media keys`);
  for (const key of guestKeys) expect(await call('guest media', 'GET', `/media/${key}`, null), [200], 'a guest fetching a proxy or thumbnail of a live link');
  for (const key of [...guestKeys, reviewable?.review_media_key, reviewable?.thumbnail_media_key].filter((k): k is string => typeof k === 'string')) {
    for (const name of ['original.mov', 'original.mp4', 'original', 'master.mov']) {
      const guess = key.replace(/[^/]+$/, name);
      const a = await call(`guess ${name}`, 'GET', `/media/${guess}`, null);
      if (a.status === 200) problem(`a guessed key next to a handed-out one answered 200: ${guess}`);
    }
  }
  expect(await call('revoke', 'DELETE', `/share/${openToken}`, coordinator.token), [200, 204], 'revoking the link');
  for (const key of guestKeys) {
    const a = await call('guest media after revocation', 'GET', `/media/${key}`, null);
    if (a.status === 200) problem('a revoked link still served its media');
  }

  ctx.log('rules: a guest session, credentials that end, a webhook secret');
  const locked = parse(await call('share with a password', 'POST', `/playlists/${playlist?.id}/share`, coordinator.token, { password: sharePassword }));
  const lockedToken: string = locked?.token ?? '';
  const opened = await call('guest with the password', 'GET', `/shared/${lockedToken}`, null, undefined, { 'x-share-password': sharePassword });
  expect(opened, [200], 'the right share password');
  const session = opened.headers.get('x-share-session') ?? '';
  if (!session) problem('a correct share password answered no x-share-session');
  expect(
    await call('guest with the session', 'GET', `/shared/${lockedToken}`, null, undefined, { 'x-share-session': session }),
    [200],
    'a guest session instead of the password',
  );
  expect(
    await call('session on another link', 'GET', `/shared/${openToken}`, null, undefined, { 'x-share-session': session }),
    [404],
    'a session on a revoked link',
  );
  expect(await call('revoke the locked link', 'DELETE', `/share/${lockedToken}`, coordinator.token), [200, 204], 'revoking the password link');
  expect(
    await call('session after revocation', 'GET', `/shared/${lockedToken}`, null, undefined, { 'x-share-session': session }),
    [404],
    'a guest session after revocation',
  );

  const soon = parse(
    await call('an expiring key', 'POST', '/auth/api-keys', artist.token, { name: 'soon', expires_at: new Date(Date.now() + 2_000).toISOString() }),
  );
  expect(await call('expiring key before', 'GET', '/me', soon?.token ?? ''), [200], 'an API key before its expiry');
  await new Promise((r) => setTimeout(r, 2_500));
  expect(await call('expiring key after', 'GET', '/me', soon?.token ?? ''), [401], 'an API key after its expiry');
  expect(
    await call('a key that ended before it began', 'POST', '/auth/api-keys', artist.token, { name: 'past', expires_at: '2001-01-01T00:00:00Z' }),
    [422],
    'an API key expiring in the past',
  );
  expect(await call("artist lists another's keys", 'GET', `/auth/api-keys?user_id=${viewer.id}`, artist.token), [403], "an Artist listing another user's keys");
  const viewerKey = parse(await call('viewer key', 'POST', '/auth/api-keys', viewer.token, { name: 'v' }));
  expect(await call('admin lists viewer keys', 'GET', `/auth/api-keys?user_id=${viewer.id}`, admin), [200], "an Admin listing another user's keys");
  expect(
    await call('artist revokes sessions', 'POST', `/auth/users/${viewer.id}/revoke-sessions`, artist.token),
    [403],
    "an Artist revoking another user's sessions",
  );
  expect(
    await call('admin revokes sessions', 'POST', `/auth/users/${viewer.id}/revoke-sessions`, admin),
    [200, 204],
    'an Admin revoking every session and key of a user',
  );
  await new Promise((r) => setTimeout(r, 1_500));
  expect(await call('viewer token after revoke-sessions', 'GET', '/me', viewer.token), [401], 'a login token after revoke-sessions');
  expect(await call('viewer key after revoke-sessions', 'GET', '/me', viewerKey?.token ?? ''), [401], 'an API key after revoke-sessions');

  const webhookSecret = `whsec-${Date.now()}-hostile`;
  await call('webhook with a secret', 'POST', '/webhooks', admin, { url: 'https://hooks.example.com/reelbase', kind: 'webhook', secret: webhookSecret });
  const hooks = await call('webhooks listed', 'GET', '/webhooks', admin);
  if (hooks.body.includes(webhookSecret)) problem('GET /webhooks answered a webhook secret');

  return {
    share_password: sharePassword,
    share_token: shareToken,
    open_share_token: openToken,
    locked_share_token: lockedToken,
    share_session: session,
    webhook_secret: webhookSecret,
    expiring_api_key: soon?.token ?? '',
    revoked_api_key: viewerKey?.token ?? '',
  };
}
