/**
 * The express application: request context, every route module, 405/404 and the one error
 * mapping. Pure wiring of what it is given, so tests build it with fake peers.
 */
import type { Logger, Metrics, Readiness } from '@reelbase/lib-platform';
import express, { type Express } from 'express';
import type { Peers } from './clients/peers.js';
import type { AuthCache } from './domain/auth.cache.js';
import type { ProjectAccess } from './domain/project.access.js';
import type { RateLimiter } from './domain/rate.limiter.js';
import { clientAddress } from './http/client.address.js';
import { errorMiddleware, notFoundHandler } from './http/error.mapper.js';
import { buildOpenApi } from './http/openapi.builder.js';
import { requestContext } from './http/request.context.js';
import type { AnyRoute } from './http/route.js';
import { mountRoutes } from './http/router.builder.js';
import { allRoutes } from './routes/index.js';
import type { ShareRouteOptions } from './routes/route.deps.js';

export const API_VERSION = '0.0.1';

export interface AppDeps {
  logger: Logger;
  metrics: Metrics;
  peers: Peers;
  auth: AuthCache;
  limiter: RateLimiter;
  readiness: Readiness;
  bodyLimitBytes: number;
  /** Who may read which restricted project (the event streams, notifications, project-named routes of other services). */
  access: ProjectAccess;
  draining?: () => boolean;
  /** A User record was written; defaults to forgetting the user's principals in this gateway only. */
  userChanged?: (userId: string) => Promise<void>;
  /** Every older signing key was retired; defaults to forgetting every login token in this gateway only. */
  signingKeysRetired?: () => void;
  /** Refused credentials per client address; unset: not limited. */
  authFailures?: RateLimiter;
  /** Login attempts per client address; unset: not limited. */
  loginLimiter?: RateLimiter;
  trustProxyHops?: number;
  maxProblems?: number;
  /** Live idempotency keys a principal may hold (router.builder.ts). */
  maxIdempotencyKeys?: number;
  /** Per-link limits of the guest routes; unset: not limited. */
  share?: ShareRouteOptions;
  /** Largest reviewable upload (MEDIA_MAX_BYTES); default 8 GiB. */
  mediaMaxBytes?: number;
}

export interface GatewayApp {
  app: Express;
  routes: AnyRoute[];
  /** The OpenAPI document. */
  openapi: Record<string, unknown>;
}

/** Builds the application and its OpenAPI document from the same route list. */
export function createApp(deps: AppDeps): GatewayApp {
  let openapiText = '';
  const routes = allRoutes({
    peers: deps.peers,
    readiness: deps.readiness,
    metrics: deps.metrics,
    openapi: () => openapiText,
    draining: deps.draining ?? (() => false),
    userChanged:
      deps.userChanged ??
      (async (userId: string) => {
        deps.auth.dropUser(userId);
      }),
    signingKeysRetired: deps.signingKeysRetired ?? (() => deps.auth.dropAllTokens()),
    loginLimiter: deps.loginLimiter,
    share: deps.share,
    addressOf: (req) => clientAddress(req, deps.trustProxyHops ?? 0),
    media: { maxBytes: deps.mediaMaxBytes ?? 8 * 1024 ** 3 },
    access: deps.access,
  });
  const openapi = buildOpenApi(routes, {
    title: 'reelbase',
    version: API_VERSION,
    description:
      'Production tracking for film, VFX and animation studios: records, events, authentication. Every answer carries ' +
      '`x-request-id`; every error but 422 has the body `{"detail","code"}`, including those given before a route is ' +
      'reached: 400 `bad_request` (malformed request, HTTP/1.1 without Host), 408 `request_timeout` (the headers, or ' +
      'then the body, were not received within `REQUEST_TIMEOUT_MS`; an upload body paused longer than ' +
      '`MEDIA_IDLE_TIMEOUT_MS`), 431 `headers_too_large` (request line and headers too large), ' +
      '404 for a WebSocket upgrade on any path but `/events/ws`. Limits: per user or API key (`RATE_LIMIT_*`), and ' +
      'per client address for refused credentials, login attempts and WebSocket connects (429 with `Retry-After`).',
  });
  openapiText = JSON.stringify(openapi);

  const app = express();
  app.disable('x-powered-by');
  // Record responses carry their own ETag (updated_at); hashing every body would cost for nothing.
  app.set('etag', false);
  app.use(requestContext(deps.logger, deps.metrics));
  mountRoutes(app, routes, {
    auth: deps.auth,
    limiter: deps.limiter,
    authFailures: deps.authFailures,
    trustProxyHops: deps.trustProxyHops,
    maxProblems: deps.maxProblems,
    maxIdempotencyKeys: deps.maxIdempotencyKeys,
    bodyLimitBytes: deps.bodyLimitBytes,
    idempotency: deps.peers.idempotency,
    logger: deps.logger,
  });
  app.use(notFoundHandler);
  app.use(errorMiddleware(deps.logger));
  return { app, routes, openapi };
}
