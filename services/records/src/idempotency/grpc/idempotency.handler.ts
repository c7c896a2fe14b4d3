/**
 * reelbase.records.v1.IdempotencyService: proto messages ↔ domain/idempotency, nothing more.
 */
import type { UnaryHandlers } from '@reelbase/lib-platform';
import type { idempotencyv1 } from '@reelbase/proto';
import { claimResponseOf } from '../../kernel/grpc/idempotency.proto.js';
import type { IdempotencyKeys } from '../domain/idempotency.keys.js';

/** The full proto name, used for registration. */
export const IDEMPOTENCY_SERVICE_NAME = 'reelbase.records.v1.IdempotencyService';

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
    claim: async (req) => claimResponseOf(await keys.claim(req)),
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
