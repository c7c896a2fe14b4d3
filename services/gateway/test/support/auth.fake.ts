/**
 * auth in memory: tokens from the token table (expiring as `state.tokenExpiry` says), one
 * password (`correct horse`) for every login, one API key, and User writes passed to the fake
 * records the way auth writes them.
 */
import { AppError, newId, type CallContext } from '@reelbase/lib-platform';
import type { authv1 } from '@reelbase/proto';
import type { FakeRecords } from './records.fake.js';
import { API_KEY_ID, knownUser, now, USERS, type FakeState, type Track } from './fake.state.js';

export function fakeAuth(state: FakeState, track: Track, records: FakeRecords) {
  const auth = {
    authenticate: async (req: authv1.AuthenticateRequest, ctx: CallContext) => {
      track('auth', 'authenticate', req, ctx);
      const p = state.tokens.get(req.token);
      if (state.authLatencyMs) await new Promise((r) => setTimeout(r, state.authLatencyMs));
      if (!p) throw new AppError('unauthenticated', 'invalid token');
      const exp = state.tokenExpiry?.get(req.token);
      if (exp !== undefined && exp * 1000 <= Date.now()) throw new AppError('unauthenticated', 'token expired');
      return { principal: p, expiresAtUnix: exp ?? 0 };
    },
    login: async (req: authv1.LoginRequest, ctx: CallContext) => {
      track('auth', 'login', req, ctx);
      if (req.password !== 'correct horse') throw new AppError('unauthenticated', 'wrong email or password');
      return { accessToken: 'admin-token', expiresIn: 43200 };
    },
    register: async (req: authv1.RegisterRequest, ctx: CallContext) => {
      track('auth', 'register', req, ctx);
      if (ctx.principal && ctx.principal.role !== 'Admin') throw new AppError('forbidden', 'only an Admin may register users');
      const user = { id: newId(), entity_type: 'User', data: { name: req.name, email: req.email, role: req.role ?? 'Admin' } };
      return { userJson: JSON.stringify(user), accessToken: ctx.principal ? undefined : 'admin-token', expiresIn: ctx.principal ? undefined : 43200 };
    },
    issueApiKey: async (req: authv1.IssueApiKeyRequest, ctx: CallContext) => {
      track('auth', 'issueApiKey', req, ctx);
      return {
        key: {
          id: API_KEY_ID,
          userId: ctx.principal!.userId,
          name: req.name,
          prefix: 'svc_abcd',
          createdAt: now(),
          expiresAt: req.expiresAt,
          access: req.access,
        },
        token: 'svc_new',
      };
    },
    listApiKeys: async (req: authv1.ListApiKeysRequest, ctx: CallContext) => {
      track('auth', 'listApiKeys', req, ctx);
      return { items: [{ id: API_KEY_ID, userId: req.userId ?? ctx.principal!.userId, name: 'farm', prefix: 'svc_abcd', createdAt: now() }] };
    },
    revokeApiKey: async (req: authv1.RevokeApiKeyRequest, ctx: CallContext) => {
      track('auth', 'revokeApiKey', req, ctx);
      if (req.id !== API_KEY_ID) throw AppError.notFound('no such key');
      return {};
    },
    rotateSigningKey: async (req: authv1.RotateSigningKeyRequest, ctx: CallContext) => {
      track('auth', 'rotateSigningKey', req, ctx);
      return { kid: 'k', retired: req.retirePrevious ? 2 : 1 };
    },
    revokeUserSessions: async (req: authv1.RevokeUserSessionsRequest, ctx: CallContext) => {
      track('auth', 'revokeUserSessions', req, ctx);
      knownUser(state, req.userId);
      return { apiKeysRevoked: 1, tokensRevokedBefore: now() };
    },
    // User writes that carry a login address: auth writes the record (here: the fake records below).
    createUser: async (req: authv1.CreateUserRequest, ctx: CallContext) => {
      track('auth', 'createUser', req, ctx);
      return records.createRecord(req.record!, ctx);
    },
    updateUser: async (req: authv1.UpdateUserRequest, ctx: CallContext) => {
      track('auth', 'updateUser', req, ctx);
      return records.updateRecord(req.record!, ctx);
    },
    changePassword: async (req: authv1.ChangePasswordRequest, ctx: CallContext) => {
      track('auth', 'changePassword', req, ctx);
      if (req.oldPassword !== 'correct horse') throw new AppError('forbidden', 'the old password is wrong');
      return {};
    },
    setPassword: async (req: authv1.SetPasswordRequest, ctx: CallContext) => {
      track('auth', 'setPassword', req, ctx);
      if (!state.records.has(req.userId) && !Object.values(USERS).some((u) => u.id === req.userId)) throw AppError.notFound(`User ${req.userId} not found`);
      return {};
    },
    getBootstrap: async (req: authv1.GetBootstrapRequest, ctx: CallContext) => {
      track('auth', 'getBootstrap', req, ctx);
      return { done: state.bootstrapped ?? false };
    },
  };
  return auth;
}
