/**
 * Login, registration, API keys and /me (docs/api-notes.md, Authentication). Auth decides who may register whom;
 * the gateway only passes the caller along.
 */
import { AppError, isAppError } from '@reelbase/lib-platform';
import { BootstrapState } from '../domain/bootstrap.state.js';
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { apiKeyListJson, issuedKeyJson, loginJson, registeredJson, rotatedJson, sessionsRevokedJson } from '../mappers/auth.mapper.js';
import { recordAnswer } from '../mappers/record.mapper.js';
import {
  ApiKeyCreate,
  ApiKeyIssued,
  ApiKeyList,
  ApiKeyListQuery,
  ApiKeyPath,
  ApiKeyRevoked,
  LoginBody,
  PasswordChange,
  PasswordChanged,
  PasswordSet,
  SessionsRevoked,
  SigningKeyRotate,
  SigningKeyRotated,
  LoginOut,
  RegisterBody,
  RegisterOut,
  UserPath,
} from '../schemas/auth.schema.js';
import { ErrorBody } from '../schemas/common.schema.js';
import { MeOut, etagHeader } from '../schemas/record.schema.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN, registersFirstUserOnly } from './route.roles.js';

export function authRoutes({ peers, loginLimiter, addressOf, userChanged, signingKeysRetired }: RouteDeps): AnyRoute[] {
  const bootstrap = new BootstrapState((ctx) => peers.auth.getBootstrap({}, ctx));
  return [
    defineRoute({
      method: 'post',
      path: '/auth/login',
      // The answer holds a credential: never stored, so never replayed.
      replayable: false,
      operationId: 'login',
      summary: 'Exchange email and password for a login token.',
      description:
        'Wrong email or password: 401 (same answer for both). 10 failed attempts per email per minute: 429. ' +
        'Attempts per client address are limited too (`LOGIN_RATE_PER_MINUTE`, 20 by default; a successful login is ' +
        'not counted): 429 with `Retry-After`.',
      tags: ['auth'],
      auth: 'public',
      body: LoginBody,
      responses: { 200: { description: 'A signed login token.', schema: LoginOut } },
      errors: [401, 429, 503],
      handler: async ({ body, ctx, req }) => {
        // Counted before auth is asked (every attempt costs a password hash there, known
        // email or not), so parallel attempts cannot pass the limit; a success is given back.
        const addr = addressOf(req);
        const wait = loginLimiter?.take(addr) ?? 0;
        if (wait > 0) throw new AppError('rate_limited', 'too many login attempts from this address', { retryAfter: Math.ceil(wait) });
        let res: Awaited<ReturnType<typeof peers.auth.login>>;
        try {
          res = await peers.auth.login({ email: body.email, password: body.password }, ctx);
        } catch (err) {
          // Only a refused attempt counts; auth being down is not the client's doing.
          if (!(isAppError(err) && (err.kind === 'unauthenticated' || err.kind === 'rate_limited'))) loginLimiter?.refund(addr);
          throw err;
        }
        loginLimiter?.refund(addr);
        return loginJson(res);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/register',
      // The answer holds a credential: never stored, so never replayed.
      replayable: false,
      operationId: 'register',
      summary: 'Create a user: the first one (as Admin) publicly, later ones with an Admin token.',
      description:
        'While no user exists this creates the first user as Admin and returns a login token. Afterwards it needs an ' +
        'Admin bearer token (403 otherwise, before the body is validated, with or without a token) and accepts `role`; ' +
        '`access_token` and `expires_in` are then null. A bearer token, when sent, must be valid (401).',
      tags: ['auth'],
      auth: 'optional',
      body: RegisterBody,
      // 403 before any 422, with or without a token: a token must be an Admin's, and an
      // anonymous call is refused once the first user exists (asked of auth until it does).
      allow: { roles: ADMIN, to: 'register users' },
      authorizeAnonymous: registersFirstUserOnly(bootstrap),
      responses: {
        200: { description: 'The created User record.', schema: RegisterOut },
        409: { description: 'A user with this email already exists: code `duplicate_code`.', schema: ErrorBody },
      },
      errors: [403, 503],
      handler: async ({ body, ctx }) => {
        return registeredJson(await peers.auth.register({ email: body.email, password: body.password, name: body.name, role: body.role }, ctx));
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/api-keys',
      // The answer holds a credential: never stored, so never replayed.
      replayable: false,
      operationId: 'createApiKey',
      summary: 'Issue an API key for the caller (shown once).',
      description:
        'With `expires_at` the key answers 401 from that moment on (every gateway caches it no longer than that); a time ' +
        'not in the future is 422. Without it the key works until revoked. A user holds at most 100 live keys (not revoked, ' +
        'not expired; `API_KEYS_PER_USER`): one more is 409 `limit_reached` until one is revoked. With `"scope": "agent"` it is an ' +
        'agent key for a render or sync agent: it calls only `POST /farm/claim`, `POST /farm/chunks/{id}/heartbeat`, `/complete` ' +
        'and `/fail`, `GET /farm/jobs/{id}`, `POST /sitesync/claim` and `POST /sitesync/state/{representation_id}/{site}`; any ' +
        'other route answers it 403 `forbidden` and the WebSocket closes 1008. It acts as its user (role and project access). ' +
        '`pools` (1 to 50 distinct names of at most 64 characters, with `"scope": "agent"` only, 422 otherwise) limits its farm ' +
        'claims to those pools: a claim naming another pool is 403 `forbidden`.',
      tags: ['auth'],
      auth: 'bearer',
      body: ApiKeyCreate,
      responses: { 200: { description: 'The new key; `token` is never shown again.', schema: ApiKeyIssued } },
      errors: [409, 503],
      handler: async ({ body, ctx }) => {
        const access = body.scope ? { scope: body.scope, pools: body.pools ?? [] } : undefined;
        return issuedKeyJson(await peers.auth.issueApiKey({ name: body.name, expiresAt: body.expires_at, access }, ctx), body.name);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/auth/api-keys',
      operationId: 'listApiKeys',
      summary: "The caller's API keys, or (Admin, `user_id`) another user's; never the keys themselves.",
      description: 'Keys not revoked, expired ones included (they answer 401). `user_id` of someone else: Admin only, 403 otherwise.',
      tags: ['auth'],
      auth: 'bearer',
      query: ApiKeyListQuery,
      responses: { 200: { description: 'Keys, oldest first.', schema: ApiKeyList } },
      errors: [403, 503],
      handler: async ({ query, ctx }) => {
        return apiKeyListJson(await peers.auth.listApiKeys({ userId: query.user_id }, ctx));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/auth/api-keys/{id}',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key; every gateway stops accepting it within seconds.',
      description: "The caller's own key, or any user's key for an Admin. Someone else's key is 404 for everyone else (ids do not leak).",
      tags: ['auth'],
      auth: 'bearer',
      params: ApiKeyPath,
      responses: { 200: { description: 'Revoked.', schema: ApiKeyRevoked } },
      errors: [403, 404, 503],
      handler: async ({ params, ctx }) => {
        await peers.auth.revokeApiKey({ id: params.id }, ctx);
        return { id: params.id, revoked: true };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/signing-keys/rotate',
      operationId: 'rotateSigningKey',
      summary: 'Start signing login tokens with a new key (Admin).',
      description:
        'Tokens signed by older keys stay valid until they expire: each older key retires once the longest token it can ' +
        'have signed has expired (the rotation time + the token lifetime, `JWT_TTL_SECONDS`), so a rotation logs nobody ' +
        'out. With `{"retire_previous": true}` (an emergency, e.g. a leaked key) every older key retires at once: every ' +
        'login token answers 401 on every gateway within seconds and everybody logs in again; API keys keep working. ' +
        'The body may be omitted (a normal rotation).',
      tags: ['auth'],
      auth: 'bearer',
      body: SigningKeyRotate,
      allow: { roles: ADMIN, to: 'rotate signing keys' },
      responses: { 200: { description: 'The new key id.', schema: SigningKeyRotated } },
      errors: [403, 503],
      handler: async ({ body, ctx }) => {
        const res = await peers.auth.rotateSigningKey({ retirePrevious: body.retire_previous }, ctx);
        if (body.retire_previous) signingKeysRetired();
        return rotatedJson(res);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/users/{id}/revoke-sessions',
      operationId: 'revokeUserSessions',
      summary: 'Revoke every login token and API key of a user (Admin).',
      description:
        'Every API key of the user is revoked and every login token issued to them until now (to the second) answers ' +
        '401; their open WebSockets are closed with 1008. Takes effect on every gateway within seconds. The user may log ' +
        'in again afterwards (disable the login with `data.login_enabled: false` to keep them out). Unknown or retired user: 404.',
      tags: ['auth'],
      auth: 'bearer',
      params: UserPath,
      allow: { roles: ADMIN, to: "revoke another user's sessions" },
      responses: { 200: { description: 'Revoked.', schema: SessionsRevoked } },
      errors: [403, 404, 503],
      handler: async ({ params, ctx }) => {
        const res = await peers.auth.revokeUserSessions({ userId: params.id }, ctx);
        // Auth announces it to every gateway too; this one acts before answering.
        await userChanged(params.id);
        return sessionsRevokedJson(params.id, res);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/auth/password',
      // A password change: never stored (docs/api-notes.md, "Idempotent retries").
      replayable: false,
      operationId: 'changePassword',
      summary: "Change the caller's own password.",
      description:
        'A wrong `old_password` is 403 `forbidden` and counts as a failed login of the address (10 per minute, then ' +
        '429). `new_password` follows the rules of registration (at least 8 characters, else 422). Login tokens and ' +
        'API keys issued before stay valid; the old password no longer logs in.',
      tags: ['auth'],
      auth: 'bearer',
      body: PasswordChange,
      responses: { 200: { description: 'Changed.', schema: PasswordChanged } },
      errors: [403, 429, 503],
      handler: async ({ body, principal, ctx }) => {
        await peers.auth.changePassword({ oldPassword: body.old_password, newPassword: body.new_password }, ctx);
        return { user_id: principal!.userId, password_set: true };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/auth/users/{id}/password',
      operationId: 'setUserPassword',
      summary: "Set any user's password (Admin).",
      description:
        'Rules of registration (at least 8 characters, else 422). Afterwards the user logs in with their `data.email` and ' +
        'this password, also a user created with `POST /entities/User`. Unknown or retired user: 404.',
      tags: ['auth'],
      auth: 'bearer',
      params: UserPath,
      body: PasswordSet,
      allow: { roles: ADMIN, to: "set another user's password" },
      responses: {
        200: { description: 'Set.', schema: PasswordChanged },
        409: { description: 'The user has no valid `data.email` to log in with (`no_login_email`), or it is taken (`duplicate_code`).', schema: ErrorBody },
      },
      errors: [403, 404, 503],
      handler: async ({ params, body, ctx }) => {
        await peers.auth.setPassword({ userId: params.id, password: body.password }, ctx);
        return { user_id: params.id, password_set: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/me',
      operationId: 'me',
      summary: "The caller's User record plus role and how the caller authenticated.",
      tags: ['auth'],
      auth: 'bearer',
      responses: { 200: { description: 'The caller.', schema: MeOut, headers: etagHeader } },
      errors: [404, 503],
      handler: async ({ principal, ctx }) => {
        const res = await peers.records.getRecord({ entityType: 'User', id: principal!.userId }, ctx);
        const { json, etag } = recordAnswer(res.record, { role: principal!.role, auth: principal!.authKind });
        return Reply.rawJson(json, 200, { etag });
      },
    }),
  ];
}
