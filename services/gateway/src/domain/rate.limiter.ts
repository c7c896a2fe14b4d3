/**
 * Token bucket per key (the caller's token hash): `rps` sustained, `burst` at once
 * (contract 10). Buckets are mutated in place so an allowed request allocates nothing.
 */

interface Bucket {
  tokens: number;
  /** Seconds (monotonic) of the last refill. */
  at: number;
}

const PRUNE_ABOVE = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

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
      if (this.buckets.size >= PRUNE_ABOVE) this.prune(now);
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

  /** Full buckets carry no state worth keeping. */
  private prune(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.rps >= this.burst) this.buckets.delete(key);
    }
  }
}
