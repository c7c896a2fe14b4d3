/**
 * What idempotency keys need from storage (docs/api-notes.md, "Idempotent retries"); store/idempotency.repository.ts.
 */
import type { ClaimOutcome, ClaimRequest, StoredAnswer } from '../../kernel/domain/idempotency.types.js';

export type { ClaimOutcome, ClaimRequest, StoredAnswer };

export interface IdempotencyStore {
  /** Claims `req.scope` under the new claim token `claim`. */
  claim(req: ClaimRequest, claim: string): Promise<ClaimOutcome>;
  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean>;
  release(scope: string, claim: string): Promise<void>;
  /** Deletes up to `limit` expired keys; how many went. */
  sweep(limit: number): Promise<number>;
}
