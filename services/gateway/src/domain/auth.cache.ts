/**
 * Token → principal, cached in memory so the hot path makes no auth call. Entries live for
 * min(auth's cache_seconds, AUTH_CACHE_SECONDS, the token's own expiry), are keyed by
 * sha256(token) (the token itself is never kept as a key), and are dropped at once when a
 * gateway or auth announces a User change or revocation, or a User event arrives.
 *
 * A token in steady use never waits for auth: once an entry has lived four fifths of its time, the
 * next request that presents it is answered from the cache and starts one call to auth beside it,
 * whose answer replaces the entry (or, when the token was revoked meanwhile, drops it). An entry
 * that ends with the login token itself is not renewed that way.
 *
 * Refused tokens are remembered too (AUTH_NEGATIVE_CACHE_SECONDS, at most
 * AUTH_NEGATIVE_CACHE_MAX of them, oldest forgotten first), so a bad token sent again and
 * again costs no call to auth; any User change or revocation forgets them all.
 */
import { createHash } from 'node:crypto';
import { AppError, isAppError, ROLES, type CallContext, type Role } from '@reelbase/lib-platform';
import type { AuthedPrincipal } from './authed.principal.js';
import type { AuthChanges } from './ports.js';

/** One resolved token. Shared by every request that presents it: treat as read-only. */
export interface AuthEntry {
  readonly hash: string;
  readonly principal: AuthedPrincipal;
  readonly expiresAt: number;
  /** From when a hit also asks auth again beside the answer (ms since the epoch); never when the entry ends with the token. */
  readonly renewAt?: number;
  /** When the credential itself stops being valid (ms since the epoch): a login token's `exp`, an API key's `expires_at`; undefined for a key that never expires. */
  readonly tokenExpiresAt?: number;
  /** The rate-limit key: the API key's id, else the user's id (never the token's spelling). */
  readonly rateKey: string;
}

export interface NegativeCacheOptions {
  /** How long a refused token is answered 401 without asking auth again (0: never). */
  seconds: number;
  /** Most refused tokens remembered at once. */
  max: number;
}

/** Asks auth who a token stands for (the `Authenticate` RPC). */
/** What auth answers for a token: the fields of its AuthenticateResponse this cache reads. */
export interface AuthAnswer {
  principal?: AuthAnswerPrincipal | undefined;
  /** When a login token stops being valid (Unix seconds); 0 or absent for an API key. */
  expiresAtUnix?: number;
}

export interface AuthAnswerPrincipal {
  userId: string;
  role: string;
  authKind: string;
  apiKeyId?: string | undefined;
  email: string;
  /** Seconds the gateway may cache this answer. */
  cacheSeconds: number;
  /** Set for an agent key (docs/api-notes.md, "Authentication"): its scope and farm pools (empty: any pool). */
  access?: { scope: string; pools: readonly string[] } | undefined;
}

export type TokenResolver = (token: string, ctx: CallContext) => Promise<AuthAnswer>;

const ROLE_SET: ReadonlySet<string> = new Set(ROLES);
const SWEEP_EVERY = 1024;
/** The part of an entry's time after which a hit renews it in the background. */
const RENEW_AFTER = 0.8;

/** sha256 hex of a token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function toPrincipal(p: AuthAnswerPrincipal): AuthedPrincipal {
  const principal: AuthedPrincipal = {
    userId: p.userId,
    // An unknown role is treated as the least privileged rather than trusted.
    role: ROLE_SET.has(p.role) ? (p.role as Role) : 'Viewer',
    authKind: p.authKind === 'api_key' ? 'api_key' : 'token',
    apiKeyId: p.apiKeyId || undefined,
    email: p.email,
  };
  // Any scope narrows: one this gateway does not know is taken as the narrowest it knows, `agent`.
  if (p.access) {
    principal.scope = 'agent';
    if (p.access.pools.length > 0) principal.pools = [...p.access.pools];
  }
  return principal;
}

/** The rate-limit key of a principal: one bucket per API key, one per user's login tokens. */
export function rateKeyOf(p: AuthedPrincipal): string {
  return p.apiKeyId ? `key:${p.apiKeyId}` : `user:${p.userId}`;
}

export class AuthCache {
  private readonly entries = new Map<string, AuthEntry>();
  /** sha256(token) → until when (ms) it is refused without asking auth. */
  private readonly refused = new Map<string, number>();
  private readonly inflight = new Map<string, Promise<AuthEntry>>();
  /** Bumped by every drop, so an answer that raced a revocation is used once but not cached. */
  private epoch = 0;
  private inserts = 0;

  constructor(
    private readonly resolve: TokenResolver,
    private readonly maxSeconds: number,
    private readonly now: () => number = Date.now,
    private readonly negative: NegativeCacheOptions = { seconds: 0, max: 0 },
  ) {}

  /** True when `token` is cached as valid (answered without a call to auth). */
  hasValid(token: string): boolean {
    const hit = this.entries.get(tokenHash(token));
    return hit !== undefined && hit.expiresAt > this.now();
  }

  /**
   * Resolves `token`; throws `unauthenticated` for a bad token and passes on `unavailable`
   * when auth is down. `fresh` skips the cache (re-checking a live WebSocket).
   */
  authenticate(token: string, ctx: CallContext, fresh = false): Promise<AuthEntry> {
    const hash = tokenHash(token);
    if (!fresh) {
      const hit = this.entries.get(hash);
      if (hit !== undefined) {
        const now = this.now();
        if (hit.expiresAt > now) {
          if (hit.renewAt !== undefined && hit.renewAt <= now && !this.inflight.has(hash)) this.renew(token, hit, ctx);
          return Promise.resolve(hit);
        }
        this.entries.delete(hash);
      }
      const until = this.refused.get(hash);
      if (until !== undefined) {
        if (until > this.now()) return Promise.reject(new AppError('unauthenticated', 'invalid or expired token'));
        this.refused.delete(hash);
      }
      const pending = this.inflight.get(hash);
      if (pending) return pending;
    }
    const p = this.call(token, hash, ctx);
    if (!fresh) this.inflight.set(hash, p);
    return p;
  }

  /**
   * Asks auth again for a cached token while the cache still answers for it: a fresh answer
   * replaces the entry, a refusal drops it (and is remembered). When auth cannot answer, the entry
   * is left to its own expiry and not renewed again (one try per entry, not one per request while
   * auth is down).
   */
  private renew(token: string, hit: AuthEntry, ctx: CallContext): void {
    const p = this.call(token, hit.hash, ctx);
    p.catch((err: unknown) => {
      if (isAppError(err) && err.kind === 'unauthenticated') return;
      if (this.entries.get(hit.hash) === hit) this.entries.set(hit.hash, { ...hit, renewAt: undefined });
    });
    this.inflight.set(hit.hash, p);
  }

  /**
   * One call to auth: its answer is cached and a refusal drops the token's entry and is
   * remembered, unless a revocation came in meanwhile (then the answer is used once, not kept).
   */
  private call(token: string, hash: string, ctx: CallContext): Promise<AuthEntry> {
    const started = this.epoch;
    const p: Promise<AuthEntry> = this.ask(token, hash, ctx).then(
      (entry) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        if (started === this.epoch && entry.expiresAt > this.now()) this.store(entry);
        return entry;
      },
      (err: unknown) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        if (started === this.epoch && isAppError(err) && err.kind === 'unauthenticated') {
          this.entries.delete(hash);
          this.remember(hash);
        }
        throw err;
      },
    );
    return p;
  }

  private async ask(token: string, hash: string, ctx: CallContext): Promise<AuthEntry> {
    let res: AuthAnswer;
    try {
      res = await this.resolve(token, ctx);
    } catch (err) {
      // Anything but "auth is down" means the token does not prove who the caller is.
      if (isAppError(err) && (err.kind === 'unavailable' || err.kind === 'internal' || err.kind === 'rate_limited')) throw err;
      throw new AppError('unauthenticated', 'invalid or expired token', { cause: err });
    }
    if (!res.principal || !res.principal.userId) throw new AppError('unauthenticated', 'invalid or expired token');
    const seconds = Math.min(Math.max(res.principal.cacheSeconds, 0), this.maxSeconds);
    const tokenExpiresAt = res.expiresAtUnix !== undefined && res.expiresAtUnix > 0 ? res.expiresAtUnix * 1000 : undefined;
    const now = this.now();
    let expiresAt = now + seconds * 1000;
    let renewAt: number | undefined = now + seconds * 1000 * RENEW_AFTER;
    if (tokenExpiresAt !== undefined && tokenExpiresAt <= expiresAt) {
      expiresAt = tokenExpiresAt;
      renewAt = undefined;
    }
    const principal = toPrincipal(res.principal);
    return { hash, principal, expiresAt, renewAt, tokenExpiresAt, rateKey: rateKeyOf(principal) };
  }

  private remember(hash: string): void {
    if (this.negative.seconds <= 0 || this.negative.max <= 0) return;
    this.refused.delete(hash);
    while (this.refused.size >= this.negative.max) {
      const oldest = this.refused.keys().next().value as string;
      this.refused.delete(oldest);
    }
    this.refused.set(hash, this.now() + this.negative.seconds * 1000);
  }

  private store(entry: AuthEntry): void {
    this.entries.set(entry.hash, entry);
    if (++this.inserts % SWEEP_EVERY === 0) this.sweep();
  }

  private sweep(): void {
    const now = this.now();
    for (const [hash, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(hash);
  }

  /** Forgets every token of `userId` (role change, retire, login disabled). */
  dropUser(userId: string): void {
    this.drop((e) => e.principal.userId === userId);
  }

  /** Forgets every login token (signing keys retired); API keys stay. */
  dropAllTokens(): void {
    this.drop((e) => e.principal.authKind === 'token');
  }

  /** Forgets the API key `apiKeyId` (revoked). */
  dropApiKey(apiKeyId: string): void {
    this.drop((e) => e.principal.apiKeyId === apiKeyId);
  }

  private drop(match: (e: AuthEntry) => boolean): void {
    this.epoch++;
    this.inflight.clear();
    // A re-enabled user's or revived key's tokens must not stay refused.
    this.refused.clear();
    for (const [hash, e] of this.entries) if (match(e)) this.entries.delete(hash);
  }

  /** Cached entries (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops entries on auth revocations and User changes; returns the unsubscribe function. */
  subscribeTo(changes: AuthChanges): () => void {
    return changes.subscribe({
      revocation: (r) => {
        if (r.api_key_id) this.dropApiKey(r.api_key_id);
        if (r.user_id) this.dropUser(r.user_id);
        if (r.all_tokens) this.dropAllTokens();
      },
      userChanged: (userId) => this.dropUser(userId),
    });
  }
}
