/**
 * auth's gRPC answers in their client form (docs/api-notes.md, Authentication): login tokens, the
 * registered user, API keys (never the keys themselves once issued), signing keys and sessions.
 */
import type { authv1 } from '@reelbase/proto';
import { recordFromJsonText } from './record.mapper.js';

/** A login token (`LoginOut`). */
export function loginJson(res: authv1.LoginResponse) {
  return { access_token: res.accessToken, token_type: 'bearer', expires_in: res.expiresIn };
}

/** The registered user, and a login token for the first user only (`RegisterOut`). */
export function registeredJson(res: authv1.RegisterResponse) {
  return { user: recordFromJsonText(res.userJson), access_token: res.accessToken ?? null, token_type: 'bearer', expires_in: res.expiresIn ?? null };
}

/** A new API key with its token, shown once (`ApiKeyIssued`); `name` is the one asked for, in case auth left it out. */
export function issuedKeyJson(res: authv1.IssueApiKeyResponse, name: string) {
  return {
    id: res.key?.id,
    name: res.key?.name ?? name,
    token: res.token,
    created_at: res.key?.createdAt,
    expires_at: res.key?.expiresAt ?? null,
    ...keyAccessJson(res.key),
  };
}

/** An agent key's scope and pools; null for a normal key, and pools null for any pool. */
function keyAccessJson(k: authv1.ApiKey | undefined): { scope: 'agent' | null; pools: string[] | null } {
  if (!k?.access) return { scope: null, pools: null };
  return { scope: 'agent', pools: k.access.pools.length ? k.access.pools : null };
}

/** API keys as listed (`ApiKeyList`). */
export function apiKeyListJson(res: authv1.ListApiKeysResponse) {
  return {
    items: res.items.map((k) => ({
      id: k.id,
      user_id: k.userId,
      name: k.name,
      prefix: k.prefix,
      created_at: k.createdAt,
      last_used_at: k.lastUsedAt ?? null,
      expires_at: k.expiresAt ?? null,
      ...keyAccessJson(k),
    })),
  };
}

/** A signing key rotation (`SigningKeyRotated`). */
export function rotatedJson(res: authv1.RotateSigningKeyResponse) {
  return { kid: res.kid, retired: res.retired };
}

/** A user's sessions revoked (`SessionsRevoked`). */
export function sessionsRevokedJson(userId: string, res: authv1.RevokeUserSessionsResponse) {
  return { user_id: userId, api_keys_revoked: res.apiKeysRevoked, tokens_revoked_before: res.tokensRevokedBefore };
}
