/**
 * The hostile probe's launch requests (docs/api-notes.md, "Actions"): launch tokens made through
 * `POST /actions/execute` for an application of the launcher catalog, then asked for under spellings
 * the router does not take (a doubled slash, an escaped letter, escaped slashes: 404, the token still
 * live), by another user (404, not used up) and with no credential (401), taken once (200) and
 * refused after (404); a second token is taken with the path in capitals. Every token goes into the
 * log scan: the request log keeps only its first characters, however the path was spelled.
 */
import { probeCalls, type ProbeContext, type Secrets } from './hostile.calls.js';

export async function probeLaunch(ctx: ProbeContext): Promise<Secrets> {
  const { call, expect } = probeCalls(ctx);
  const admin = ctx.adminToken;
  ctx.log('launch: launch tokens made by /actions/execute, asked for by /actions/launch/{token}');
  expect(
    await call('launcher catalog', 'PUT', '/schema/applications', admin, {
      applications: [
        { code: 'hostile_app', label: 'Hostile App', group: 'hostile', version: '1', executables: { linux: '/bin/true' }, environment: { HOSTILE: '1' } },
      ],
    }),
    [200],
    'the launcher catalog',
  );
  const shot = expect(
    await call('shot to launch on', 'POST', '/entities/Shot', admin, { project_id: ctx.projectId, data: { code: 'LAUNCH' } }),
    [200],
    'a Shot',
  );
  const execute = async (label: string): Promise<string> =>
    expect(
      await call(label, 'POST', '/actions/execute', admin, {
        action_id: 'launch:hostile_app',
        project_id: ctx.projectId,
        entity_type: 'Shot',
        entity_ids: [shot?.id],
      }),
      [200],
      'a launch action',
    )?.token ?? '';

  const password = `launcher-pass-${Date.now()}`;
  expect(
    await call('register another user', 'POST', '/auth/register', admin, { email: 'launcher@hostile.test', password, name: 'Launcher', role: 'Artist' }),
    [200],
    'a second user',
  );
  const other: string =
    expect(await call('login another user', 'POST', '/auth/login', null, { email: 'launcher@hostile.test', password }), [200], 'the second user’s login')
      ?.access_token ?? '';

  const token = await execute('execute a launch');
  for (const [how, path] of [
    ['a doubled slash', `/actions//launch/${token}`],
    ['an escaped letter', `/actions/%6caunch/${token}`],
    ['escaped slashes', `/actions%2Flaunch%2F${token}`],
  ] as const) {
    expect(await call(`launch token with ${how}`, 'GET', path, admin), [404], `a launch token asked for with ${how}`);
  }
  expect(await call('launch token, another user', 'GET', `/actions/launch/${token}`, other), [404], "another user's take of a launch token");
  expect(await call('launch token, no credential', 'GET', `/actions/launch/${token}`, null), [401], 'a launch take without a credential');
  const payload = expect(await call('launch token taken', 'GET', `/actions/launch/${token}`, admin), [200], 'the launch take by its user');
  if (payload?.app !== 'hostile' || payload?.environment?.HOSTILE !== '1') ctx.problem(`the launch take answered ${JSON.stringify(payload).slice(0, 160)}`);
  expect(await call('launch token taken again', 'GET', `/actions/launch/${token}`, admin), [404], 'a second take of a launch token');

  const capitals = await execute('execute another launch');
  expect(await call('launch token in capitals', 'GET', `/ACTIONS/LAUNCH/${capitals}/`, admin), [200, 404], 'a launch take spelled in capitals');
  return { launch_token: token, launch_token_capitals: capitals, launcher_password: password, launcher_login_signature: other.split('.')[2] ?? '' };
}
