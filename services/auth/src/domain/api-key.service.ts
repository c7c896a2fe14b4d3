/**
 * API keys: issue (shown once, optionally with an expiry), list, revoke; and revoking every
 * session and key of a user (Admin). A revocation is announced on NATS so every gateway drops
 * its cached answer and re-checks its sockets at once.
 */
import { AppError, isUuid, newId, type CallContext, type Logger, type Problem } from '@reelbase/lib-platform';
import { generateApiKey } from './api-key.token.js';
import { isAdmin, requireAdmin, requireUser } from './auth.rules.js';
import type { ApiKeyStore, RevocationNotifier, SessionRevocationStore, StoredKey, UserLookup } from './ports.js';

export interface ApiKeyView {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  createdAt: string;
  lastUsedAt?: string;
  expiresAt?: string;
  /** `agent` for an agent key (docs/api-notes.md, "Authentication"); absent for a normal key. */
  scope?: 'agent';
  /** An agent key's farm pools; absent: any pool. */
  pools?: string[];
}

/** What a key may reach, as asked for: `scope` absent (a normal key) or `agent`, and an agent key's pools. */
export interface KeyAccess {
  scope?: string;
  pools?: readonly string[];
}

export const MAX_KEY_NAME_LENGTH = 200;
/** Pools an agent key names at most, and the longest pool name. */
export const AGENT_POOLS = { max: 50, nameLength: 64 } as const;
/** Live API keys a user may hold unless configured (`API_KEYS_PER_USER`). */
export const MAX_KEYS_PER_USER = 100;

function view(k: StoredKey): ApiKeyView {
  return {
    id: k.id,
    userId: k.userId,
    name: k.name,
    prefix: k.prefix,
    createdAt: new Date(k.createdAt).toISOString(),
    lastUsedAt: k.lastUsedAt ? new Date(k.lastUsedAt).toISOString() : undefined,
    expiresAt: k.expiresAt ? new Date(k.expiresAt).toISOString() : undefined,
    ...(k.scope === 'agent' ? { scope: k.scope } : {}),
    ...(k.scope === 'agent' && k.pools ? { pools: k.pools } : {}),
  };
}

/**
 * The scope and pools a key is issued with, or every problem of them: `scope` is `agent` or absent;
 * `pools` only with it, 1 to 50 distinct non-blank names of at most 64 characters.
 */
export function checkKeyAccess(access: KeyAccess, problems: Problem[]): { scope: 'agent' | null; pools: string[] | null } {
  const { scope, pools } = access;
  if (scope !== undefined && scope !== 'agent') problems.push({ loc: ['scope'], msg: "Input should be 'agent'", type: 'literal_error' });
  if (pools === undefined) return { scope: scope === 'agent' ? scope : null, pools: null };
  if (scope !== 'agent') {
    problems.push({ loc: ['pools'], msg: 'pools are given only with "scope": "agent"', type: 'value_error' });
  } else if (pools.length < 1 || pools.length > AGENT_POOLS.max) {
    problems.push({ loc: ['pools'], msg: `List should have 1 to ${AGENT_POOLS.max} items`, type: pools.length < 1 ? 'too_short' : 'too_long' });
  }
  const seen = new Set<string>();
  pools.forEach((pool, i) => {
    if (pool.trim() === '') problems.push({ loc: ['pools', i], msg: 'A pool name should not be blank', type: 'string_too_short' });
    else if (pool.length > AGENT_POOLS.nameLength) {
      problems.push({ loc: ['pools', i], msg: `String should have at most ${AGENT_POOLS.nameLength} characters`, type: 'string_too_long' });
    } else if (seen.has(pool)) problems.push({ loc: ['pools', i], msg: `pool ${pool} is listed twice`, type: 'value_error' });
    seen.add(pool);
  });
  return { scope: 'agent', pools: [...pools] };
}

/** RFC 3339 with a zone (`2026-01-31T18:00:00Z`, `...+01:00`), as the API documents it. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/i;

/** The instant `raw` names, or NaN unless it is RFC 3339 naming a real calendar date and time (no 30 February, no 24:00). */
function rfc3339(raw: string): number {
  const m = RFC3339.exec(raw);
  if (!m) return NaN;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const local = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  const real =
    local.getUTCFullYear() === y && local.getUTCMonth() === mo - 1 && local.getUTCDate() === d && local.getUTCHours() === h && local.getUTCMinutes() === mi;
  const zoneOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return real && s <= 59 && zoneOk ? Date.parse(raw) : NaN;
}

export interface ApiKeyServiceDeps {
  store: ApiKeyStore;
  sessions: SessionRevocationStore;
  users: UserLookup;
  notifier: RevocationNotifier;
  logger: Logger;
  now?: () => number;
  /** Live (not revoked, not expired) keys a user may hold; default {@link MAX_KEYS_PER_USER}. */
  maxPerUser?: number;
}

export class ApiKeyService {
  private readonly store: ApiKeyStore;
  private readonly notifier: RevocationNotifier;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(private readonly deps: ApiKeyServiceDeps) {
    this.store = deps.store;
    this.notifier = deps.notifier;
    this.logger = deps.logger;
    this.now = deps.now ?? Date.now;
  }

  /**
   * A new key of the caller, shown once. With `access.scope` `agent` it calls only the farm and
   * sitesync agent routes, and claims only from `access.pools` when given (docs/api-notes.md,
   * "Authentication"). Every problem of the request is one 422.
   */
  async issue(rawName: string, ctx: CallContext, rawExpiresAt?: string, access: KeyAccess = {}): Promise<{ key: ApiKeyView; token: string }> {
    const caller = requireUser(ctx);
    const problems: Problem[] = [];
    const name = rawName.trim();
    if (!name) problems.push({ loc: ['name'], msg: 'Field required', type: 'missing' });
    else if (name.length > MAX_KEY_NAME_LENGTH) {
      problems.push({ loc: ['name'], msg: `String should have at most ${MAX_KEY_NAME_LENGTH} characters`, type: 'string_too_long' });
    }
    const expiresAt = this.expiryOf(rawExpiresAt, problems);
    const { scope, pools } = checkKeyAccess(access, problems);
    if (problems.length) throw AppError.invalid(problems);
    const generated = generateApiKey();
    const max = this.deps.maxPerUser ?? MAX_KEYS_PER_USER;
    const row = await this.store.insert(
      { id: newId(), userId: caller.userId, name, prefix: generated.prefix, keyHash: generated.hash, expiresAt, scope, pools },
      max,
    );
    if (!row) {
      throw AppError.conflict('limit_reached', `a user holds at most ${max} live API keys; revoke one you no longer use (DELETE /auth/api-keys/{id})`);
    }
    this.logger.info(
      { api_key_id: row.id, user_id: caller.userId, expires_at: expiresAt?.toISOString(), scope: scope ?? undefined, request_id: ctx.requestId },
      'API key issued',
    );
    return { key: view(row), token: generated.token };
  }

  /** An expiry in the future, or null for none; a problem at `expires_at` otherwise. */
  private expiryOf(raw: string | undefined, problems: Problem[]): Date | null {
    if (raw === undefined) return null;
    const at = rfc3339(raw);
    if (!Number.isFinite(at)) {
      problems.push({ loc: ['expires_at'], msg: 'Input should be a valid datetime with a time zone (RFC 3339)', type: 'datetime_parsing' });
      return null;
    }
    if (at <= this.now()) {
      problems.push({ loc: ['expires_at'], msg: 'Input should be in the future', type: 'datetime_future' });
      return null;
    }
    return new Date(at);
  }

  /** The keys of the caller, or (Admin) of `userId`; another user's keys are 403 for everyone else. */
  async list(ctx: CallContext, userId?: string): Promise<ApiKeyView[]> {
    const caller = requireUser(ctx);
    const whose = userId ?? caller.userId;
    if (whose !== caller.userId && !isAdmin(caller)) throw new AppError('forbidden', "only an Admin may list another user's API keys");
    if (!isUuid(whose)) throw AppError.invalid([{ loc: ['user_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' }]);
    return (await this.store.listActive(whose)).map(view);
  }

  /**
   * Admin: revokes every API key of `userId` and every login token issued to them until now,
   * and tells every gateway. An unknown or retired user is 404.
   */
  async revokeUserSessions(userId: string, ctx: CallContext): Promise<{ apiKeysRevoked: number; tokensRevokedBefore: string }> {
    const caller = requireAdmin(ctx);
    if (!isUuid(userId) || !(await this.deps.users.find(userId))) throw AppError.notFound('user not found');
    const before = await this.deps.sessions.revokeBefore(userId);
    const keys = await this.store.revokeAllOf(userId);
    this.logger.info(
      { user_id: userId, api_keys_revoked: keys.length, by: caller.userId, request_id: ctx.requestId },
      'sessions and API keys of a user revoked',
    );
    await this.notifier.userRevoked({ user_id: userId });
    return { apiKeysRevoked: keys.length, tokensRevokedBefore: before.toISOString() };
  }

  /** Revokes the caller's key (an Admin may revoke anyone's); any other id is not found. */
  async revoke(id: string, ctx: CallContext): Promise<void> {
    const caller = requireUser(ctx);
    const notFound = () => AppError.notFound('API key not found');
    if (!isUuid(id)) throw notFound();
    const key = await this.store.findById(id);
    if (!key || key.revokedAt || (key.userId !== caller.userId && !isAdmin(caller))) throw notFound();
    if (!(await this.store.revoke(id))) throw notFound();
    this.logger.info({ api_key_id: id, user_id: key.userId, by: caller.userId, request_id: ctx.requestId }, 'API key revoked');
    await this.notifier.apiKeyRevoked({ api_key_id: id, user_id: key.userId });
  }
}
