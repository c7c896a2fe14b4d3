/**
 * AuthService over gRPC: requests to domain calls and back; no logic of its own.
 */
import { AppError, type CallContext, type UnaryHandlers } from '@reelbase/lib-platform';
import { recordsv1, type authv1 } from '@reelbase/proto';
import type { ApiKeyService, ApiKeyView } from '../domain/api-key.service.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { LoginService } from '../domain/login.service.js';
import type { RegistrationService } from '../domain/registration.service.js';
import type { SigningKeyRotation } from '../domain/signing-key.rotation.js';
import type { UserAccountService } from '../domain/user-account.service.js';
import type { CreatedUser } from '../domain/ports.js';

export interface AuthHandlerDeps {
  registration: RegistrationService;
  login: LoginService;
  authenticator: Authenticator;
  apiKeys: ApiKeyService;
  rotation: SigningKeyRotation;
  accounts: UserAccountService;
}

/** A User write's data: a JSON object (422 at `data` otherwise). */
function userData(dataJson: string | undefined): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(dataJson || '{}');
  } catch {
    data = undefined;
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw AppError.invalid([{ loc: ['data'], msg: 'Input should be a valid JSON object', type: 'dict_type' }]);
  }
  return data as Record<string, unknown>;
}

function userRequest<T extends { entityType: string }>(record: T | undefined): T {
  if (!record) throw AppError.invalid([{ loc: ['record'], msg: 'Field required', type: 'missing' }]);
  if (record.entityType !== 'User') throw new AppError('bad_request', 'CreateUser and UpdateUser write User records only');
  return record;
}

const recordOf = (user: CreatedUser) => ({ record: recordsv1.Record.fromJSON(JSON.parse(user.recordJson)) });

/** Absent → undefined (unchanged); a NullableString without value → null (cleared). */
const nullable = (v: recordsv1.NullableString | undefined): string | null | undefined => (v === undefined ? undefined : (v.value ?? null));

/** A key as listed: an agent key's scope and pools (empty: any pool) as its `access`. */
function protoKey({ scope, pools, ...k }: ApiKeyView): authv1.ApiKey {
  return scope ? { ...k, access: { scope, pools: pools ?? [] } } : k;
}

/** The full proto name the handlers are registered under. */
export const AUTH_SERVICE_NAME = 'reelbase.auth.v1.AuthService';

export function authHandlers(deps: AuthHandlerDeps): UnaryHandlers<authv1.AuthServiceServer> {
  return {
    async register(req: authv1.RegisterRequest, ctx: CallContext): Promise<authv1.RegisterResponse> {
      const r = await deps.registration.register({ email: req.email, password: req.password, name: req.name, role: req.role }, ctx);
      return { userJson: r.recordJson, accessToken: r.accessToken, expiresIn: r.expiresIn };
    },

    async login(req: authv1.LoginRequest): Promise<authv1.LoginResponse> {
      const { token, expiresIn } = await deps.login.login(req.email, req.password);
      return { accessToken: token, expiresIn };
    },

    async authenticate(req: authv1.AuthenticateRequest): Promise<authv1.AuthenticateResponse> {
      const p = await deps.authenticator.authenticate(req.token);
      return {
        principal: {
          userId: p.userId,
          role: p.role,
          authKind: p.authKind,
          apiKeyId: p.apiKeyId,
          email: p.email,
          cacheSeconds: p.cacheSeconds,
          access: p.scope ? { scope: p.scope, pools: p.pools ?? [] } : undefined,
        },
        expiresAtUnix: p.expiresAtUnix,
      };
    },

    async getBootstrap(): Promise<authv1.GetBootstrapResponse> {
      return { done: await deps.registration.bootstrapped() };
    },

    async issueApiKey(req: authv1.IssueApiKeyRequest, ctx: CallContext): Promise<authv1.IssueApiKeyResponse> {
      // A repeated field cannot be absent: no pools is "any pool".
      const access = req.access ? { scope: req.access.scope, pools: req.access.pools.length ? req.access.pools : undefined } : {};
      const issued = await deps.apiKeys.issue(req.name, ctx, req.expiresAt, access);
      return { key: protoKey(issued.key), token: issued.token };
    },

    async listApiKeys(req: authv1.ListApiKeysRequest, ctx: CallContext): Promise<authv1.ListApiKeysResponse> {
      return { items: (await deps.apiKeys.list(ctx, req.userId)).map(protoKey) };
    },

    async revokeApiKey(req: authv1.RevokeApiKeyRequest, ctx: CallContext): Promise<authv1.RevokeApiKeyResponse> {
      await deps.apiKeys.revoke(req.id, ctx);
      return {};
    },

    async rotateSigningKey(req: authv1.RotateSigningKeyRequest, ctx: CallContext): Promise<authv1.RotateSigningKeyResponse> {
      return deps.rotation.rotate(req.retirePrevious === true, ctx);
    },

    async revokeUserSessions(req: authv1.RevokeUserSessionsRequest, ctx: CallContext): Promise<authv1.RevokeUserSessionsResponse> {
      return deps.apiKeys.revokeUserSessions(req.userId, ctx);
    },

    async createUser(req: authv1.CreateUserRequest, ctx: CallContext): Promise<authv1.CreateUserResponse> {
      const r = userRequest(req.record);
      const data = userData(r.dataJson);
      return recordOf(await deps.accounts.createUser({ projectId: r.projectId, status: r.status, active: r.active, thumbnailId: r.thumbnailId, data }, ctx));
    },

    async updateUser(req: authv1.UpdateUserRequest, ctx: CallContext): Promise<authv1.UpdateUserResponse> {
      const r = userRequest(req.record);
      const data = userData(r.dataJson);
      return recordOf(
        await deps.accounts.updateUser(
          {
            id: r.id,
            projectId: nullable(r.projectId),
            status: nullable(r.status),
            active: r.active,
            thumbnailId: nullable(r.thumbnailId),
            data,
            ifMatch: r.ifMatch,
          },
          ctx,
        ),
      );
    },

    async changePassword(req: authv1.ChangePasswordRequest, ctx: CallContext): Promise<authv1.ChangePasswordResponse> {
      await deps.accounts.changeOwnPassword(req.oldPassword, req.newPassword, ctx);
      return {};
    },

    async setPassword(req: authv1.SetPasswordRequest, ctx: CallContext): Promise<authv1.SetPasswordResponse> {
      await deps.accounts.setPassword(req.userId, req.password, ctx);
      return {};
    },
  };
}
