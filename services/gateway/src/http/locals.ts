/**
 * Typed per-request state kept on `res.locals` by the gateway's middleware.
 */
import type { CallContext } from '@reelbase/lib-platform';
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
   * The Idempotency-Key this request claimed (http/idempotency.ts): a record create passes it to
   * records, whose statement stores the answer with the record.
   */
  idempotency?: { scope: string; claim: string };
}

/** The gateway's view of `res.locals`. */
export function localsOf(res: Response): GatewayLocals {
  return res.locals as GatewayLocals;
}
