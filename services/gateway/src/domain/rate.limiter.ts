/**
 * Token bucket per key: `rps` sustained, `burst` at once. The gateway keys its buckets by
 * principal (user or API key id: however a token is spelled, one caller has one bucket) and,
 * for refused tokens, logins and WebSocket connects, by client address. Buckets are mutated
 * in place so an allowed request allocates nothing.
 */

interface Bucket {
  tokens: number;
  /** Seconds (monotonic) of the last refill. */
  at: number;
}

const PRUNE_ABOVE = 10_000;
/** Buckets kept at most: past it (after pruning full ones) the least recently created go. */
const MAX_BUCKETS = 100_000;
/** Seconds between prunes, so a flood of new keys does not rescan the map on every request. */
const PRUNE_EVERY = 1;
/** The deepest a bucket may go below zero by {@link RateLimiter.charge}, in seconds of refill. */
const MAX_DEBT_SECONDS = 60;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private prunedAt = -Infinity;

  constructor(
    private readonly rps: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  /** Takes one token for `key`: 0 when allowed, else the seconds to wait before retrying. */
  take(key: string): number {
    const now = this.now();
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= PRUNE_ABOVE && now - this.prunedAt >= PRUNE_EVERY) this.prune(now);
      if (this.buckets.size >= MAX_BUCKETS) this.evictOldest();
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + (now - b.at) * this.rps);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.rps;
  }

  /**
   * Takes `n` more tokens for `key`, which was just admitted by {@link take}: the rest of the
   * weight of a request that does the work of many. The balance may go below zero (at most down
   * to minus `MAX_DEBT_SECONDS` of refill), so the caller's next requests wait until it refills:
   * a caller's sustained rate stays `rps` whatever the size of its requests.
   */
  charge(key: string, n: number): void {
    const b = this.buckets.get(key);
    if (b === undefined || !(n > 0)) return;
    b.tokens = Math.max(-MAX_DEBT_SECONDS * this.rps, b.tokens - n);
  }

  /** The seconds to wait before `key` may take a token (0: it may now); takes nothing. */
  peek(key: string): number {
    const b = this.buckets.get(key);
    if (b === undefined) return 0;
    const tokens = Math.min(this.burst, b.tokens + (this.now() - b.at) * this.rps);
    return tokens >= 1 ? 0 : (1 - tokens) / this.rps;
  }

  /** Gives back a token taken for `key` (an attempt that turned out not to count). */
  refund(key: string): void {
    const b = this.buckets.get(key);
    if (b !== undefined) b.tokens = Math.min(this.burst, b.tokens + 1);
  }

  /** Bucket count (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /** Drops the oldest tenth of the buckets (a client dropped this way starts over with a full bucket). */
  private evictOldest(): void {
    let n = Math.ceil(this.buckets.size / 10);
    for (const key of this.buckets.keys()) {
      if (n-- <= 0) break;
      this.buckets.delete(key);
    }
  }

  /** Full buckets carry no state worth keeping. */
  private prune(now: number): void {
    this.prunedAt = now;
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.rps >= this.burst) this.buckets.delete(key);
    }
  }
}
