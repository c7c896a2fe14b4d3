/**
 * What route modules may use. Each module is `(deps) => AnyRoute[]`; adding a route group is
 * one new module plus one line in routes/index.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger, Metrics, Readiness } from '@reelbase/lib-platform';
import type { Peers } from '../clients/peers.js';
import type { GuestSecrets } from '../domain/guest.secrets.js';
import type { ProjectAccess } from '../domain/project.access.js';
import type { RateLimiter } from '../domain/rate.limiter.js';

/** What the guest routes are given (share.routes.ts; docs/review.md). */
export interface ShareRouteOptions {
  /** Guest notes per link (SHARE_NOTES_PER_MINUTE); unset: not limited. */
  notesLimiter?: RateLimiter;
  /** Wrong or missing passwords per link (SHARE_PASSWORD_FAILURES_PER_MINUTE); unset: not limited. */
  passwordFailures?: RateLimiter;
  /** PUBLIC_URL: the origin of the `url` of new links; unset: the request's scheme and Host. */
  publicUrl?: string;
  logger?: Logger;
  /** Seals guest media keys and sessions; unset (tests of other routes): guests get no media keys and no sessions. */
  secrets?: GuestSecrets;
  /** Lifetime of a guest's media keys (SHARE_MEDIA_KEY_SECONDS). */
  mediaKeySeconds?: number;
  /** Lifetime of a guest session (SHARE_SESSION_SECONDS). */
  sessionSeconds?: number;
}

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
  /**
   * Who may read which restricted project (docs/api-notes.md, "Restricted projects"): what the
   * event streams and notifications leave out, and the 404 of a route naming a project that
   * another service answers as itself. `refresh(true)` after a Project write, before answering.
   */
  access: ProjectAccess;
}
