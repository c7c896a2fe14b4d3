/**
 * Idempotency keys for the gateway (docs/api-notes.md, "Idempotent retries"): a POST with an
 * `Idempotency-Key` claims its scope before it runs, and its answer is stored when it ends; a
 * repeat with the same body gets that answer again, with another body a conflict, and while the
 * first still runs it is told so (the gateway waits and asks again). A principal holds a bounded
 * number of live keys: a new key beyond it is refused until its oldest expires.
 */
import { AppError, newId, type Problem } from '@reelbase/lib-platform';
import type { ClaimOutcome, ClaimRequest, IdempotencyStore, StoredAnswer } from './idempotency.ports.js';

const HASH = /^[0-9a-f]{64}$/;
const DAY_MS = 24 * 3600 * 1000;
const PRINCIPAL = /^(user:[0-9a-zA-Z-]{1,64}|link:[0-9a-f]{64})$/;

function checkScope(scope: string, extra: Problem[] = []): void {
  const problems = [...extra];
  if (!HASH.test(scope)) problems.push({ loc: ['scope'], msg: 'scope must be a SHA-256 in hex', type: 'value_error' });
  if (problems.length) throw AppError.invalid(problems);
}

export class IdempotencyKeys {
  constructor(private readonly store: IdempotencyStore) {}

  claim(req: ClaimRequest): Promise<ClaimOutcome> {
    const problems: Problem[] = [];
    if (!HASH.test(req.bodyHash)) problems.push({ loc: ['body_hash'], msg: 'body_hash must be a SHA-256 in hex', type: 'value_error' });
    if (!(req.leaseMs >= 1000 && req.leaseMs <= DAY_MS)) problems.push({ loc: ['lease_ms'], msg: 'lease_ms must be 1000..86400000', type: 'value_error' });
    if (!(req.keepMs >= 1000 && req.keepMs <= 7 * DAY_MS)) problems.push({ loc: ['keep_ms'], msg: 'keep_ms must be 1000..604800000', type: 'value_error' });
    if (!PRINCIPAL.test(req.principal)) problems.push({ loc: ['principal'], msg: 'principal must be user:<id> or link:<sha-256>', type: 'value_error' });
    if (!(Number.isInteger(req.maxKeys) && req.maxKeys >= 0)) problems.push({ loc: ['max_keys'], msg: 'max_keys must be 0 or more', type: 'value_error' });
    checkScope(req.scope, problems);
    return this.store.claim(req, newId());
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
