/**
 * Token → principal, cached in memory so the hot path makes no auth call. Entries live for
 * min(auth's cache_seconds, AUTH_CACHE_SECONDS), are keyed by sha256(token) (the token itself
 * is never kept as a key), and are dropped at once when auth announces a revocation or a
 * User event arrives.
 */
import { createHash } from 'node:crypto';
import { AppError, isAppError, ROLES, type CallContext, type Role } from '@reelbase/lib-platform';
import type { authv1 } from '@reelbase/proto';
import type { AuthedPrincipal } from '../http/locals.js';
import type { GatewayBus } from '../live/gateway.bus.js';

/** One resolved token. Shared by every request that presents it: treat as read-only. */
export interface AuthEntry {
  readonly hash: string;
  readonly principal: AuthedPrincipal;
  readonly expiresAt: number;
}

/** Asks auth who a token stands for (the `Authenticate` RPC). */
export type TokenResolver = (token: string, ctx: CallContext) => Promise<authv1.AuthenticateResponse>;

const ROLE_SET: ReadonlySet<string> = new Set(ROLES);
const SWEEP_EVERY = 1024;

/** sha256 hex of a token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function toPrincipal(p: authv1.Principal): AuthedPrincipal {
  return {
    userId: p.userId,
    // An unknown role is treated as the least privileged rather than trusted.
    role: ROLE_SET.has(p.role) ? (p.role as Role) : 'Viewer',
    authKind: p.authKind === 'api_key' ? 'api_key' : 'token',
    apiKeyId: p.apiKeyId || undefined,
    email: p.email,
  };
}

export class AuthCache {
  private readonly entries = new Map<string, AuthEntry>();
  private readonly inflight = new Map<string, Promise<AuthEntry>>();
  /** Bumped by every drop, so an answer that raced a revocation is used once but not cached. */
  private epoch = 0;
  private inserts = 0;

  constructor(
    private readonly resolve: TokenResolver,
    private readonly maxSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Resolves `token`; throws `unauthenticated` for a bad token and passes on `unavailable`
   * when auth is down. `fresh` skips the cache (re-checking a live WebSocket).
   */
  authenticate(token: string, ctx: CallContext, fresh = false): Promise<AuthEntry> {
    const hash = tokenHash(token);
    if (!fresh) {
      const hit = this.entries.get(hash);
      if (hit !== undefined) {
        if (hit.expiresAt > this.now()) return Promise.resolve(hit);
        this.entries.delete(hash);
      }
      const pending = this.inflight.get(hash);
      if (pending) return pending;
    }
    const started = this.epoch;
    const p = this.ask(token, hash, ctx).then(
      (entry) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        if (started === this.epoch && entry.expiresAt > this.now()) this.store(entry);
        return entry;
      },
      (err: unknown) => {
        if (this.inflight.get(hash) === p) this.inflight.delete(hash);
        throw err;
      },
    );
    if (!fresh) this.inflight.set(hash, p);
    return p;
  }

  private async ask(token: string, hash: string, ctx: CallContext): Promise<AuthEntry> {
    let res: authv1.AuthenticateResponse;
    try {
      res = await this.resolve(token, ctx);
    } catch (err) {
      // Anything but "auth is down" means the token does not prove who the caller is.
      if (isAppError(err) && (err.kind === 'unavailable' || err.kind === 'internal' || err.kind === 'rate_limited')) throw err;
      throw new AppError('unauthenticated', 'invalid or expired token', { cause: err });
    }
    if (!res.principal || !res.principal.userId) throw new AppError('unauthenticated', 'invalid or expired token');
    const seconds = Math.min(Math.max(res.principal.cacheSeconds, 0), this.maxSeconds);
    return { hash, principal: toPrincipal(res.principal), expiresAt: this.now() + seconds * 1000 };
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

  /** Forgets the API key `apiKeyId` (revoked). */
  dropApiKey(apiKeyId: string): void {
    this.drop((e) => e.principal.apiKeyId === apiKeyId);
  }

  private drop(match: (e: AuthEntry) => boolean): void {
    this.epoch++;
    this.inflight.clear();
    for (const [hash, e] of this.entries) if (match(e)) this.entries.delete(hash);
  }

  /** Cached entries (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Drops entries on auth revocations and User events; returns the unsubscribe function. */
  subscribeTo(bus: GatewayBus): () => void {
    const offRevocation = bus.subscribe('revocation', (r) => {
      if (r.api_key_id) this.dropApiKey(r.api_key_id);
      if (r.user_id) this.dropUser(r.user_id);
    });
    const offEvent = bus.subscribe('event', (item) => {
      if (item.row.entity_type === 'User') this.dropUser(item.row.entity_id);
    });
    return () => {
      offRevocation();
      offEvent();
    };
  }
}
