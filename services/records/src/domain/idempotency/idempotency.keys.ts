/**
 * Idempotency keys for the gateway (docs/api-notes.md, "Idempotent retries"): a POST with an
 * `Idempotency-Key` claims its scope before it runs, and its answer is stored when it ends; a
 * repeat with the same body gets that answer again, with another body a conflict, and while the
 * first still runs it is told so (the gateway waits and asks again).
 */
import { AppError, newId, type Problem } from '@reelbase/lib-platform';

/** The answer a key gives again. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimOutcome =
  { outcome: 'claimed'; claim: string } | { outcome: 'replay'; answer: StoredAnswer } | { outcome: 'conflict' } | { outcome: 'in_flight' };

export interface IdempotencyStore {
  claim(scope: string, bodyHash: string, claim: string, leaseMs: number, keepMs: number): Promise<ClaimOutcome>;
  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean>;
  release(scope: string, claim: string): Promise<void>;
  /** Deletes up to `limit` expired keys; how many went. */
  sweep(limit: number): Promise<number>;
}

const HASH = /^[0-9a-f]{64}$/;
const DAY_MS = 24 * 3600 * 1000;

function checkScope(scope: string, extra: Problem[] = []): void {
  const problems = [...extra];
  if (!HASH.test(scope)) problems.push({ loc: ['scope'], msg: 'scope must be a SHA-256 in hex', type: 'value_error' });
  if (problems.length) throw AppError.invalid(problems);
}

export class IdempotencyKeys {
  constructor(private readonly store: IdempotencyStore) {}

  claim(scope: string, bodyHash: string, leaseMs: number, keepMs: number): Promise<ClaimOutcome> {
    const problems: Problem[] = [];
    if (!HASH.test(bodyHash)) problems.push({ loc: ['body_hash'], msg: 'body_hash must be a SHA-256 in hex', type: 'value_error' });
    if (!(leaseMs >= 1000 && leaseMs <= DAY_MS)) problems.push({ loc: ['lease_ms'], msg: 'lease_ms must be 1000..86400000', type: 'value_error' });
    if (!(keepMs >= 1000 && keepMs <= 7 * DAY_MS)) problems.push({ loc: ['keep_ms'], msg: 'keep_ms must be 1000..604800000', type: 'value_error' });
    checkScope(scope, problems);
    return this.store.claim(scope, bodyHash, newId(), leaseMs, keepMs);
  }

  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean> {
    checkScope(scope);
    if (answer.status >= 500 || answer.status < 100)
      throw AppError.invalid([{ loc: ['answer', 'status'], msg: 'a 5xx answer is not kept', type: 'value_error' }]);
    return this.store.finish(scope, claim, answer);
  }

  async release(scope: string, claim: string): Promise<void> {
    checkScope(scope);
    await this.store.release(scope, claim);
  }

  /** Deletes expired keys in rounds of `batch` until none is left. */
  async sweep(batch = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.store.sweep(batch);
      total += n;
      if (n < batch) return total;
    }
  }
}
