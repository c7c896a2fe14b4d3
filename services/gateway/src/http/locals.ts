/**
 * Typed per-request state kept on `res.locals` by the gateway's middleware.
 */
import type { CallContext, Principal } from '@reelbase/lib-platform';
import type { Response } from 'express';

/** A principal resolved by auth, with what the gateway needs beyond lib-platform's. */
export interface AuthedPrincipal extends Principal {
  email: string;
}

export interface GatewayLocals {
  requestId: string;
  /** The matched route's template (labels metrics and logs; never the raw path). */
  routeLabel?: string;
  principal?: AuthedPrincipal;
  /** sha256 of the bearer token. */
  tokenHash?: string;
  /** The context passed to every gRPC call of this request. */
  ctx: CallContext;
  /** A body-parser failure held back so authentication and roles are checked first. */
  bodyError?: unknown;
}

/** The gateway's view of `res.locals`. */
export function localsOf(res: Response): GatewayLocals {
  return res.locals as GatewayLocals;
}
