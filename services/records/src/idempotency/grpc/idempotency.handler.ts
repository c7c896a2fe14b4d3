/**
 * reelbase.records.v1.IdempotencyService: proto messages ↔ domain/idempotency, nothing more.
 */
import type { UnaryHandlers } from '@reelbase/lib-platform';
import { idempotencyv1 } from '@reelbase/proto';
import type { IdempotencyKeys } from '../domain/idempotency.keys.js';

/** The full proto name, used for registration. */
export const IDEMPOTENCY_SERVICE_NAME = 'reelbase.records.v1.IdempotencyService';

const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;

function headersOf(json: string): Record<string, string> {
  try {
    const v = JSON.parse(json || '{}') as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v).filter(([, x]) => typeof x === 'string')) as Record<string, string>;
    }
  } catch {
    // not JSON: no headers
  }
  return {};
}

export function idempotencyHandlers({ keys }: { keys: IdempotencyKeys }): UnaryHandlers<idempotencyv1.IdempotencyServiceServer> {
  return {
    claim: async (req) => {
      const r = await keys.claim(req);
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
    },
    finish: async (req) => {
      const a = req.answer ?? { status: 0, headersJson: '{}', body: '' };
      return { stored: await keys.finish(req.scope, req.claim, { status: a.status, headers: headersOf(a.headersJson), body: a.body }) };
    },
    release: async (req) => {
      await keys.release(req.scope, req.claim);
      return {};
    },
  };
}
