/**
 * Authenticate: a login token or an API key to the principal it stands for. The User record
 * is read on every call, so a retired or login-disabled user is refused at once even with
 * an unexpired token (the gateway caches answers for `cache_seconds` only).
 */
import { decodeJwt } from 'jose';
import { AppError, type Logger, type Role } from '@reelbase/lib-platform';
import { hashApiKey, isApiKeyToken, sameHash } from './api-key.token.js';
import type { LoginTokenIssuer } from './login-token.issuer.js';
import type { UserDirectory } from './user.directory.js';

export interface ResolvedPrincipal {
  userId: string;
  role: Role;
  authKind: 'token' | 'api_key';
  apiKeyId?: string;
  email: string;
  cacheSeconds: number;
  /** A login token's `exp` (Unix seconds), so a socket opened with it closes then; 0 for an API key. */
  expiresAtUnix: number;
}

export interface ApiKeyLookup {
  findByHash(keyHash: string): Promise<{ id: string; userId: string; keyHash: string; revokedAt?: Date | null } | null>;
  touch(id: string): Promise<void>;
}

export interface AuthenticatorDeps {
  apiKeys: ApiKeyLookup;
  tokens: LoginTokenIssuer;
  users: UserDirectory;
  cacheSeconds: number;
  logger: Logger;
  now?: () => number;
}

const TOUCH_INTERVAL_MS = 60_000;
const rejected = () => new AppError('unauthenticated', 'invalid or expired token');

export class Authenticator {
  /** When this replica last recorded a use of each key, to write at most once a minute. */
  private readonly touched = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.now = deps.now ?? Date.now;
  }

  async authenticate(token: string): Promise<ResolvedPrincipal> {
    if (!token) throw rejected();
    let userId: string;
    let apiKeyId: string | undefined;
    let expiresAtUnix = 0;
    if (isApiKeyToken(token)) {
      const hash = hashApiKey(token);
      const key = await this.deps.apiKeys.findByHash(hash);
      if (!key || !sameHash(key.keyHash, hash) || key.revokedAt) throw rejected();
      userId = key.userId;
      apiKeyId = key.id;
      this.noteUse(key.id);
    } else {
      userId = await this.deps.tokens.verify(token);
      // Verified above (signature, issuer, required exp), so the payload can be read as is.
      const exp = decodeJwt(token).exp;
      if (typeof exp !== 'number' || !Number.isFinite(exp)) throw rejected();
      expiresAtUnix = Math.floor(exp);
    }
    const user = await this.deps.users.find(userId);
    if (!user || !user.loginEnabled) throw rejected();
    return {
      userId,
      role: user.role,
      authKind: apiKeyId ? 'api_key' : 'token',
      apiKeyId,
      email: user.email,
      cacheSeconds: this.deps.cacheSeconds,
      expiresAtUnix,
    };
  }

  /** Records the use without delaying the answer. */
  private noteUse(id: string): void {
    const now = this.now();
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    this.touched.set(id, now);
    this.deps.apiKeys.touch(id).catch((err: unknown) => {
      this.touched.delete(id);
      this.deps.logger.warn({ err, api_key_id: id }, 'could not record API key use');
    });
  }
}
