/**
 * A User's record and its login stay one, against the whole stack: changing `data.email` moves
 * the login, a taken address is 409 and changes nothing, a User created with POST /entities/User
 * logs in only once an Admin set its password, and a user changes their own password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

describe('User records and their logins (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  const login = (email: string, password: string) => e.api.post('/auth/login', { email, password });
  const setPassword = (api: Api, id: string, password: string) => api.call('PUT', `/auth/users/${id}/password`, { body: { password } });

  beforeAll(async () => {
    e = await startE2EStack('users');
    admin = await bootstrapAdmin(e.api);
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('changing data.email moves the login: the old address is refused, the new one logs in', async () => {
    const art = await createUser(admin.api, 'Artist', 'mover@studio.test');
    const moved = expectStatus(await admin.api.patch(`/entities/User/${art.user.id}`, { data: { email: 'Moved@Studio.test' } }), 200, 'move');
    expect(moved.data.email).toBe('moved@studio.test');
    expectError(await login('mover@studio.test', 'password-1234'), 401, 'unauthenticated');
    const token = expectStatus(await login('moved@studio.test', 'password-1234'), 200, 'login at the new address').access_token;
    expect(expectStatus(await e.api.as(token).get('/me'), 200).data.email).toBe('moved@studio.test');
    // The session from before the move keeps working.
    expectStatus(await art.api.get('/me'), 200, 'old session');
  });

  it('a taken address is 409 duplicate_code and changes neither the record nor either login', async () => {
    const art = await createUser(admin.api, 'Artist', 'keeper@studio.test');
    const before = expectStatus(await admin.api.get(`/entities/User/${art.user.id}`), 200);
    // The log has caught up with the User's creation before it is read.
    await eventually(
      async () => ((await eventsAfter(admin.api, 0, '&entity_type=User')).some((ev) => ev.entity_id === art.user.id) ? true : undefined),
      10_000,
      'User event',
    );
    const lastEvent = await lastEventId(admin.api);
    expectError(await admin.api.patch(`/entities/User/${art.user.id}`, { data: { email: 'ADMIN@studio.test', name: 'Renamed' } }), 409, 'duplicate_code');
    expectError(await admin.api.post('/entities/User', { data: { name: 'Copy', email: 'keeper@studio.test', role: 'Artist' } }), 409, 'duplicate_code');
    const after = expectStatus(await admin.api.get(`/entities/User/${art.user.id}`), 200);
    expect(after).toEqual(before);
    await new Promise((r) => setTimeout(r, 500)); // time for a write's event to reach the log, had there been one
    expect(await lastEventId(admin.api)).toBe(lastEvent);
    expectStatus(await login('keeper@studio.test', 'password-1234'), 200, 'its own login');
    expectStatus(await login('admin@studio.test', 'correct horse battery'), 200, "the Admin's login");
    expectValidation(await admin.api.patch(`/entities/User/${art.user.id}`, { data: { email: null } }), ['body', 'data', 'email']);

    // A create records refuses (a role the schema does not know) gives its address back at once.
    expectValidation(await admin.api.post('/entities/User', { data: { name: 'Bad', email: 'retry@studio.test', role: 'Wizard' } }), ['body', 'data', 'role']);
    expectStatus(await admin.api.post('/entities/User', { data: { name: 'Good', email: 'retry@studio.test', role: 'Artist' } }), 200, 'the same address');
  });

  it('POST /entities/User makes a user who logs in only after an Admin sets a password', async () => {
    const user = expectStatus(
      await admin.api.post('/entities/User', { data: { name: 'Nina New', email: 'nina@studio.test', role: 'Artist', login_enabled: true } }),
      200,
      'create User',
    );
    expectError(await login('nina@studio.test', 'nina-password'), 401, 'unauthenticated');

    const art = await createUser(admin.api, 'Artist', 'bystander@studio.test');
    const sup = await createUser(admin.api, 'Supervisor', 'sup@studio.test');
    expectError(await setPassword(art.api, user.id, 'nina-password'), 403, 'forbidden');
    expectError(await setPassword(sup.api, user.id, 'nina-password'), 403, 'forbidden');
    expectError(await setPassword(admin.api, '0190a0b0-0000-7000-8000-0000000000ff', 'nina-password'), 404, 'not_found');
    expectValidation(await setPassword(admin.api, user.id, 'short'), ['body', 'password']);
    expectError(await login('nina@studio.test', 'nina-password'), 401, 'unauthenticated');

    expect(expectStatus(await setPassword(admin.api, user.id, 'nina-password'), 200, 'set password')).toEqual({ user_id: user.id, password_set: true });
    const token = expectStatus(await login('nina@studio.test', 'nina-password'), 200, 'first login').access_token;
    const me = expectStatus(await e.api.as(token).get('/me'), 200);
    expect([me.id, me.role, me.auth]).toEqual([user.id, 'Artist', 'token']);
  });

  it('POST /auth/password: a wrong old password is 403; the right one changes it and the old no longer logs in', async () => {
    const self = await createUser(admin.api, 'Artist', 'self@studio.test', 'first-password');
    const key = expectStatus(await self.api.post('/auth/api-keys', { name: 'farm' }), 200).token as string;
    expectError(await self.api.post('/auth/password', { old_password: 'not-it', new_password: 'second-password' }), 403, 'forbidden');
    expectValidation(await self.api.post('/auth/password', { old_password: 'first-password', new_password: 'short' }), ['body', 'new_password']);
    expectError(await e.api.post('/auth/password', { old_password: 'first-password', new_password: 'second-password' }), 401, 'unauthenticated');
    expectStatus(await login('self@studio.test', 'first-password'), 200, 'still the first password');

    expect(expectStatus(await self.api.post('/auth/password', { old_password: 'first-password', new_password: 'second-password' }), 200)).toEqual({
      user_id: self.user.id,
      password_set: true,
    });
    expectError(await login('self@studio.test', 'first-password'), 401, 'unauthenticated');
    expectStatus(await login('self@studio.test', 'second-password'), 200, 'the new password');
    // Documented: tokens and API keys issued before the change stay valid.
    expectStatus(await self.api.get('/me'), 200, 'token from before');
    expectStatus(await e.api.as(key).get('/me'), 200, 'API key');
  });
});
