/**
 * What route modules may use. Each module is `(deps) => AnyRoute[]`; adding a route group is
 * one new module plus one line in routes/index.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Metrics, Readiness } from '@reelbase/lib-platform';
import type { Peers } from '../clients/peers.js';
import type { RateLimiter } from '../domain/rate.limiter.js';
import type { ShareRouteOptions } from './share.routes.js';

export interface RouteDeps {
  peers: Peers;
  readiness: Readiness;
  metrics: Metrics;
  /** The OpenAPI document as JSON text (built once, after every route is known). */
  openapi: () => string;
  /** True once a graceful stop began: /readyz answers 503 so load balancers move on. */
  draining: () => boolean;
  /**
   * A User record was written (role, login, retirement): forgets that user's cached
   * principals here and tells every other gateway, before the write is answered.
   */
  userChanged: (userId: string) => Promise<void>;
  /**
   * An emergency rotation retired every older signing key: this gateway forgets every cached login
   * token and re-checks its sockets before answering (auth tells every other gateway).
   */
  signingKeysRetired: () => void;
  /** Login attempts per client address (LOGIN_RATE_PER_MINUTE); unset: not limited. */
  loginLimiter?: RateLimiter;
  /** Per-link limits of the guest routes and a logger for them (docs/review.md). */
  share?: ShareRouteOptions;
  /** The client address of a request (TRUST_PROXY_HOPS applied). */
  addressOf: (req: IncomingMessage) => string;
  /** Reviewable uploads: the largest accepted (MEDIA_MAX_BYTES). */
  media: { maxBytes: number };
}
