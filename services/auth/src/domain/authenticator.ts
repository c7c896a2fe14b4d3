/**
 * Authenticate: a login token or an API key to the principal it stands for. The User record
 * is read on every call, so a retired or login-disabled user is refused at once even with
 * an unexpired token (the gateway caches answers for `cache_seconds` only). An API key past
 * its `expires_at` is refused, and so is a login token issued at or before its user's last
 * "revoke every session" (tokens carry `iat` in whole seconds, so one issued in the same second
 * as the revocation is refused too).
 */
import { decodeJwt } from 'jose';
import { AppError, type Logger, type Role } from '@reelbase/lib-platform';
import { hashApiKey, isApiKeyToken, sameHash } from './api-key.token.js';
import type { LoginTokenIssuer } from './login-token.issuer.js';
import type { ApiKeyLookup, SessionRevocationLookup, UserDirectory } from './ports.js';

export interface ResolvedPrincipal {
  userId: string;
  role: Role;
  authKind: 'token' | 'api_key';
  apiKeyId?: string;
  email: string;
  cacheSeconds: number;
  /** `agent` for an agent key: it calls only the farm and sitesync agent routes (docs/api-notes.md, "Authentication"). */
  scope?: 'agent';
  /** An agent key's farm pools; absent: any pool. */
  pools?: string[];
  /**
   * When the credential stops being valid (Unix seconds, rounded down): a login token's `exp`, an
   * API key's `expires_at`; 0 for a key that never expires. Gateways cache no longer, and close
   * sockets opened with it then.
   */
  expiresAtUnix: number;
}

export interface AuthenticatorDeps {
  apiKeys: ApiKeyLookup;
  sessions: SessionRevocationLookup;
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
    let access: Pick<ResolvedPrincipal, 'scope' | 'pools'> = {};
    let expiresAtUnix = 0;
    if (isApiKeyToken(token)) {
      const hash = hashApiKey(token);
      const key = await this.deps.apiKeys.findByHash(hash);
      if (!key || !sameHash(key.keyHash, hash) || key.revokedAt) throw rejected();
      if (key.expiresAt) {
        const expiresAt = new Date(key.expiresAt).getTime();
        if (expiresAt <= this.now()) throw rejected();
        expiresAtUnix = Math.floor(expiresAt / 1000);
      }
      userId = key.userId;
      apiKeyId = key.id;
      if (key.scope === 'agent') access = key.pools ? { scope: 'agent', pools: key.pools } : { scope: 'agent' };
      this.noteUse(key.id);
    } else {
      userId = await this.deps.tokens.verify(token);
      // Verified above (signature, issuer, required exp and iat), so the payload can be read as is.
      const { exp, iat } = decodeJwt(token);
      if (typeof exp !== 'number' || !Number.isFinite(exp) || typeof iat !== 'number') throw rejected();
      const revokedBefore = await this.deps.sessions.revokedBefore(userId);
      if (revokedBefore && iat * 1000 <= revokedBefore.getTime()) throw rejected();
      // A token of a key due to retire ends with the key (gateways cache it no longer).
      const keyEnd = this.deps.tokens.keyRetiresAt(token);
      expiresAtUnix = Math.floor(keyEnd === undefined ? exp : Math.min(exp, keyEnd / 1000));
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
      ...access,
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
