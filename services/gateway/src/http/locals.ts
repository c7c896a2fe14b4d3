/**
 * Typed per-request state kept on `res.locals` by the gateway's middleware.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { idempotencyv1 } from '@reelbase/proto';
import type { Response } from 'express';
import type { AuthedPrincipal } from '../domain/authed.principal.js';

export type { AuthedPrincipal };

export interface GatewayLocals {
  requestId: string;
  /** The matched route's template (labels metrics and logs; never the raw path). */
  routeLabel?: string;
  principal?: AuthedPrincipal;
  /** sha256 of the bearer token. */
  tokenHash?: string;
  /** The caller's rate-limit bucket, when this route is rate limited (a route's `cost` charges it). */
  rateKey?: string;
  /** The context passed to every gRPC call of this request. */
  ctx: CallContext;
  /** A body-parser failure held back so authentication and roles are checked first. */
  bodyError?: unknown;
  /**
   * The Idempotency-Key a write carries to records itself (`RouteDef.keyInWrite`, http/idempotency.ts):
   * its handler passes it with its one records call, which claims the key, writes and stores the answer.
   */
  keyedWrite?: idempotencyv1.IdempotentWrite;
}

/** The gateway's view of `res.locals`. */
export function localsOf(res: Response): GatewayLocals {
  return res.locals as GatewayLocals;
}
