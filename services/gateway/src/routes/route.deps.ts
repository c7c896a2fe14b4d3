/**
 * What route modules may use. Each module is `(deps) => AnyRoute[]`; adding a route group is
 * one new module plus one line in routes/index.ts.
 */
import type { Metrics, Readiness } from '@reelbase/lib-platform';
import type { Peers } from '../clients/peers.js';

export interface RouteDeps {
  peers: Peers;
  readiness: Readiness;
  metrics: Metrics;
  /** The OpenAPI document as JSON text (built once, after every route is known). */
  openapi: () => string;
  /** True once a graceful stop began: /readyz answers 503 so load balancers move on. */
  draining: () => boolean;
}
