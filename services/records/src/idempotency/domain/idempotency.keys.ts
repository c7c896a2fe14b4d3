/**
 * Idempotency keys for the gateway (docs/api-notes.md, "Idempotent retries"): a POST with an
 * `Idempotency-Key` claims its scope before it runs, and its answer is stored when it ends; a
 * repeat with the same body gets that answer again, with another body a conflict, and while the
 * first still runs it is told so (the gateway waits and asks again). A principal holds a bounded
 * number of live keys: a new key beyond it is refused until its oldest expires.
 */
import { AppError, appErrorAnswer, asCrossed, isAppError, isKeptStatus, newId, type Problem } from '@reelbase/lib-platform';
import type { IdempotencyClaim } from '../../kernel/domain/record.ports.js';
import type { Keyed, KeyedWrite } from '../../kernel/domain/idempotency.types.js';
import type { ClaimOutcome, ClaimRequest, IdempotencyStore, StoredAnswer } from './idempotency.ports.js';

const HASH = /^[0-9a-f]{64}$/;
const DAY_MS = 24 * 3600 * 1000;
const PRINCIPAL = /^(user:[0-9a-zA-Z-]{1,64}|link:[0-9a-f]{64})$/;

function checkScope(scope: string, extra: Problem[] = []): void {
  const problems = [...extra];
  if (!HASH.test(scope)) problems.push({ loc: ['scope'], msg: 'scope must be a SHA-256 in hex', type: 'value_error' });
  if (problems.length) throw AppError.invalid(problems);
}

/**
 * The answer the gateway sends for `err` thrown by a write that carried its key, when that answer
 * is kept (a client mistake: below 500, not 429); undefined otherwise. Built as the gateway builds
 * it (lib-platform's appErrorAnswer of the error as it arrives there), so a repeat gets the same bytes.
 */
export function keptErrorAnswer(err: unknown, write: Pick<KeyedWrite, 'pathParams' | 'queryParams'>): StoredAnswer | undefined {
  if (!isAppError(err)) return undefined;
  const shape = { pathParams: new Set(write.pathParams), queryParams: new Set(write.queryParams), otherwise: 'body' as const };
  const mapped = appErrorAnswer(asCrossed(err), shape);
  if (!isKeptStatus(mapped.status)) return undefined;
  return { status: mapped.status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(mapped.body) };
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

  /**
   * A write that carries its key, in one call (docs/architecture.md, "Idempotency keys"): claims the
   * key, then runs `run` with the claim; `run` stores the write's answer in the write's own
   * transaction. A key that is not claimed now answers its outcome and nothing runs. When `run`
   * fails, a kept answer (a client mistake) is stored for the key and anything else releases it, so
   * a retry runs again; either way the failure is thrown on. The claim is its own statement, committed
   * before the write: a repeat sees the key in flight at once (and waits for it without holding a
   * connection), and the principal's live keys are counted with the claim committed.
   */
  async write<T>(write: KeyedWrite, run: (key: IdempotencyClaim) => Promise<T>): Promise<Keyed<T>> {
    const claimed = await this.claim(write.claim);
    if (claimed.outcome !== 'claimed') return { key: claimed };
    const key = { scope: write.claim.scope, claim: claimed.claim };
    try {
      return { done: await run(key) };
    } catch (err) {
      const answer = keptErrorAnswer(err, write);
      // Not stored (the database went away): the key stays claimed until its lease runs out, and a
      // retry with the same body runs again then (docs/api-notes.md, "Idempotent retries").
      await (answer ? this.store.finish(key.scope, key.claim, answer) : this.store.release(key.scope, key.claim)).catch(() => undefined);
      throw err;
    }
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
