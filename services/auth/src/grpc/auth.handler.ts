/**
 * AuthService over gRPC: requests to domain calls and back; no logic of its own.
 */
import type { UnaryHandlers } from '@reelbase/lib-platform';
import type { authv1 } from '@reelbase/proto';
import type { ApiKeyService } from '../domain/api-key.service.js';
import type { Authenticator } from '../domain/authenticator.js';
import type { LoginService } from '../domain/login.service.js';
import type { RegistrationService } from '../domain/registration.service.js';
import type { SigningKeyRing } from '../domain/signing-key.ring.js';
import { requireAdmin } from '../domain/auth.rules.js';

export interface AuthHandlerDeps {
  registration: RegistrationService;
  login: LoginService;
  authenticator: Authenticator;
  apiKeys: ApiKeyService;
  ring: SigningKeyRing;
}

/** The full proto name the handlers are registered under. */
export const AUTH_SERVICE_NAME = 'reelbase.auth.v1.AuthService';

export function authHandlers(deps: AuthHandlerDeps): UnaryHandlers<authv1.AuthServiceServer> {
  return {
    async register(req, ctx) {
      const r = await deps.registration.register(
        { email: req.email, password: req.password, name: req.name, role: req.role },
        ctx,
      );
      return { userJson: r.recordJson, accessToken: r.accessToken, expiresIn: r.expiresIn };
    },

    async login(req) {
      const { token, expiresIn } = await deps.login.login(req.email, req.password);
      return { accessToken: token, expiresIn };
    },

    async authenticate(req) {
      const p = await deps.authenticator.authenticate(req.token);
      return {
        principal: {
          userId: p.userId,
          role: p.role,
          authKind: p.authKind,
          apiKeyId: p.apiKeyId,
          email: p.email,
          cacheSeconds: p.cacheSeconds,
        },
        expiresAtUnix: p.expiresAtUnix,
      };
    },

    async getBootstrap() {
      return { done: await deps.registration.bootstrapped() };
    },

    async issueApiKey(req, ctx) {
      return deps.apiKeys.issue(req.name, ctx);
    },

    async listApiKeys(_req, ctx) {
      return { items: await deps.apiKeys.list(ctx) };
    },

    async revokeApiKey(req, ctx) {
      await deps.apiKeys.revoke(req.id, ctx);
      return {};
    },

    async rotateSigningKey(_req, ctx) {
      requireAdmin(ctx);
      return { kid: await deps.ring.rotate() };
    },
  };
}
