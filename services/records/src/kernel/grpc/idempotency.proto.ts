/**
 * An Idempotency-Key's proto messages ↔ the domain (kernel/domain/idempotency.types.ts): the
 * outcome of a claim as IdempotencyService.Claim and the writes that carry their key answer it.
 */
import { idempotencyv1 } from '@reelbase/proto';
import type { ClaimOutcome, KeyedWrite } from '../domain/idempotency.types.js';

const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;

/** A claim's outcome as a message. */
export function claimResponseOf(r: ClaimOutcome): idempotencyv1.IdempotencyServiceClaimResponse {
  switch (r.outcome) {
    case 'claimed':
      return { outcome: Outcome.OUTCOME_CLAIMED, claim: r.claim, retryAfterMs: 0 };
    case 'replay':
      return {
        outcome: Outcome.OUTCOME_REPLAY,
        claim: '',
        retryAfterMs: 0,
        answer: { status: r.answer.status, headersJson: JSON.stringify(r.answer.headers), body: r.answer.body },
      };
    case 'conflict':
      return { outcome: Outcome.OUTCOME_CONFLICT, claim: '', retryAfterMs: 0 };
    case 'limited':
      return { outcome: Outcome.OUTCOME_LIMITED, claim: '', retryAfterMs: r.retryAfterMs };
    default:
      return { outcome: Outcome.OUTCOME_IN_FLIGHT, claim: '', retryAfterMs: 0 };
  }
}

const NO_CLAIM: idempotencyv1.IdempotencyServiceClaimRequest = { scope: '', bodyHash: '', leaseMs: 0, keepMs: 0, principal: '', maxKeys: 0 };

/** A write's key as the domain takes it (a message without a claim is checked there, and refused). */
export function keyedWriteOf(m: idempotencyv1.IdempotentWrite): KeyedWrite {
  const { scope, bodyHash, leaseMs, keepMs, principal, maxKeys } = m.claim ?? NO_CLAIM;
  return { claim: { scope, bodyHash, leaseMs, keepMs, principal, maxKeys }, pathParams: m.pathParams, queryParams: m.queryParams };
}
