/**
 * Starts the gateway: gRPC peers, the NATS live feed, the auth cache, the express app and the
 * WebSocket hub on one HTTP server, plus the ops server (/healthz, /readyz, /metrics without
 * credentials, for Prometheus) on its own port like every service. Tests pass fake adapters
 * (peers, bus, readiness).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  announce,
  connectNats,
  createLogger,
  Metrics,
  natsNames,
  pingNats,
  redactUrl,
  Readiness,
  startOpsServer,
  systemContext,
  withResources,
  type Logger,
  type NatsConnection,
  type ResourceStack,
  type RunningService,
} from '@reelbase/lib-platform';
import { createApp } from './app.js';
import { connectPeers, type PeerConnections, type Peers } from './clients/peers.js';
import type { GatewayConfig } from './config.js';
import { AuthCache } from './domain/auth.cache.js';
import { GuestSecrets } from './domain/guest.secrets.js';
import { ProjectAccess } from './domain/project.access.js';
import { RateLimiter } from './domain/rate.limiter.js';
import { clientAddress } from './http/client.address.js';
import { guardBody } from './http/body.deadline.js';
import { clientErrorOf, writeRawError, type RawError } from './http/raw.response.js';
import { isUploadRequest } from './routes/media.routes.js';
import { requestIdFrom } from './http/request.context.js';
import { authChangesOf, createGatewayBus, projectChangesOf, type GatewayBus } from './live/gateway.bus.js';
import { startNatsFeed, type LiveFeed } from './live/nats.feed.js';
import { EventsHub } from './ws/events.hub.js';
import { handshakeProblem } from './ws/handshake.js';

/** Replaceable adapters; anything omitted is the real thing. */
export interface GatewayAdapters {
  peers: Peers;
  /** A bus fed by the caller instead of NATS (no NATS connection is made). */
  bus: GatewayBus;
  readiness: Readiness;
}

/** A running gateway: `httpPort` is the API (GATEWAY_PORT), `opsPort` the ops server (HTTP_PORT). */
export interface RunningGateway extends RunningService {
  opsPort: number;
  server: Server;
  bus: GatewayBus;
}

/**
 * Publishes `{"user_id"}` on the revocations subject that every gateway follows, and waits
 * (briefly) for the server to have it. A lost message only delays the effect elsewhere until
 * the User event or the cache expiry, so it never fails the write that was already committed.
 */
function userChangeAnnouncer(nc: NatsConnection, subject: string, logger: Logger): (userId: string) => Promise<void> {
  return async (userId: string) => {
    await announce(nc, subject, { user_id: userId }, { logger, failure: 'could not announce a User change to other gateways' });
  };
}

/**
 * The project access map over records' ListRestrictedProjects, asked as the gateway itself. Failed
 * reads are logged at most once a minute (while records is down they are retried every second).
 */
function projectAccess(peers: Peers, logger: Logger): ProjectAccess {
  let loggedAt = 0;
  const failed = (err: unknown) => {
    const now = Date.now();
    if (now - loggedAt < 60_000) return;
    loggedAt = now;
    logger.warn({ err }, 'could not read the restricted projects from records');
  };
  return new ProjectAccess(async () => (await peers.records.listRestrictedProjects({}, systemContext())).projects, failed);
}

export function startGateway(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.LOG_LEVEL),
  adapters: Partial<GatewayAdapters> = {},
): Promise<RunningGateway> {
  return withResources(logger, (resources) => openGateway(config, logger, adapters, resources), config.SHUTDOWN_TIMEOUT_MS);
}

async function openGateway(config: GatewayConfig, logger: Logger, adapters: Partial<GatewayAdapters>, resources: ResourceStack): Promise<RunningGateway> {
  const metrics = new Metrics('gateway');
  let conns: PeerConnections | undefined;
  const peers =
    adapters.peers ??
    (conns = connectPeers(
      {
        auth: config.AUTH_ADDR,
        records: config.RECORDS_ADDR,
        events: config.EVENTS_ADDR,
        schema: config.SCHEMA_ADDR,
        media: config.MEDIA_TRANSCODE_ADDR,
        notifier: config.NOTIFIER_ADDR,
      },
      config.RPC_DEADLINE_MS,
      metrics,
      config.INTERNAL_AUTH_SECRET,
      undefined,
      { schemaMs: config.SCHEMA_RPC_DEADLINE_MS, mediaIdleMs: config.MEDIA_IDLE_TIMEOUT_MS },
    )).peers;
  if (conns) resources.defer('peers', () => conns.close());

  let nc: NatsConnection | undefined;
  let feed: LiveFeed | undefined;
  const bus = adapters.bus ?? createGatewayBus(logger);
  if (!adapters.bus) {
    const natsConn = (nc = await connectNats(config.NATS_URL, 'gateway', logger));
    resources.defer('nats', () => natsConn.drain());
    metrics.watchNats(natsConn);
    feed = startNatsFeed(natsConn, natsNames(config.NATS_PREFIX), bus, logger);
    resources.defer('live feed', () => feed?.stop());
  }

  let readiness = adapters.readiness;
  if (!readiness) {
    readiness = new Readiness(1500);
    if (conns) for (const [name, check] of Object.entries(conns.health)) readiness.add(name, check);
    const natsConn = nc;
    if (natsConn) {
      readiness.add('nats', () => pingNats(natsConn));
    }
  }

  // Subscribed before the hub, so a socket re-check never reads an entry about to be dropped.
  const auth = new AuthCache((token, ctx) => peers.auth.authenticate({ token }, ctx), config.AUTH_CACHE_SECONDS, Date.now, {
    seconds: config.AUTH_NEGATIVE_CACHE_SECONDS,
    max: config.AUTH_NEGATIVE_CACHE_MAX,
  });
  resources.defer('auth cache', auth.subscribeTo(authChangesOf(bus)));
  // Subscribed before the hub too: a Project event changes the map before any socket is offered it.
  const access = projectAccess(peers, logger);
  resources.defer('project access changes', access.subscribeTo(projectChangesOf(bus)));
  // The first read, awaited so the first requests find the map; with records down the gateway
  // starts all the same, and the map stays unknown (503 for filtered callers) until a retry reads it.
  await access.refresh();
  resources.startLoop('project access', access);
  const limiter = new RateLimiter(config.RATE_LIMIT_RPS, config.RATE_LIMIT_BURST);
  const authFailures = new RateLimiter(config.AUTH_FAILURE_RPS, config.AUTH_FAILURE_BURST);
  const loginLimiter = new RateLimiter(config.LOGIN_RATE_PER_MINUTE / 60, config.LOGIN_RATE_PER_MINUTE);
  const wsConnects = new RateLimiter(config.WS_CONNECT_RPS, config.WS_CONNECT_BURST);
  const addressOf = (req: IncomingMessage) => clientAddress(req, config.TRUST_PROXY_HOPS);
  const announce = nc ? userChangeAnnouncer(nc, natsNames(config.NATS_PREFIX).authRevocations, logger) : undefined;
  /**
   * After a User write commits: this gateway forgets the user's principals and re-checks its
   * sockets at once (the local bus), and every other gateway does when the NATS message
   * arrives, well before the User event makes its way through the event log.
   */
  const userChanged = async (userId: string) => {
    bus.emit('revocation', { user_id: userId });
    await announce?.(userId);
  };
  let draining = false;
  const { app } = createApp({
    logger,
    metrics,
    peers,
    auth,
    limiter,
    readiness,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    access,
    draining: () => draining,
    userChanged,
    signingKeysRetired: () => bus.emit('revocation', { all_tokens: true }),
    authFailures,
    loginLimiter,
    trustProxyHops: config.TRUST_PROXY_HOPS,
    maxProblems: config.MAX_PROBLEMS,
    maxIdempotencyKeys: config.IDEMPOTENCY_MAX_KEYS,
    share: {
      notesLimiter: new RateLimiter(config.SHARE_NOTES_PER_MINUTE / 60, config.SHARE_NOTES_PER_MINUTE),
      passwordFailures: new RateLimiter(config.SHARE_PASSWORD_FAILURES_PER_MINUTE / 60, config.SHARE_PASSWORD_FAILURES_PER_MINUTE),
      publicUrl: config.PUBLIC_URL,
      logger,
      secrets: new GuestSecrets(config.INTERNAL_AUTH_SECRET),
      sessionSeconds: config.SHARE_SESSION_SECONDS,
      mediaKeySeconds: config.SHARE_MEDIA_KEY_SECONDS,
    },
    mediaMaxBytes: config.MEDIA_MAX_BYTES,
  });

  // Opened before the API and so closed after it: Prometheus can still scrape while the API drains.
  const ops = await startOpsServer({ port: config.HTTP_PORT, host: config.BIND_HOST, metrics, readiness, logger });
  resources.defer('ops', () => ops.close());

  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      // Headers must arrive within REQUEST_TIMEOUT_MS, checked every second; late ones are
      // answered 408 through 'clientError' below. node's whole-request timeout is off: no
      // upload of GiBs could meet it, so bodies have their own deadline (body.deadline.ts).
      requestTimeout: 0,
      headersTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, config.REQUEST_TIMEOUT_MS),
      // Checked by the request context instead, so that 400 has the error body and a request id.
      requireHostHeader: false,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      guardBody(req, res, {
        totalMs: config.REQUEST_TIMEOUT_MS,
        idleMs: config.MEDIA_IDLE_TIMEOUT_MS,
        isUpload: isUploadRequest,
        onTimeout: (r, w, kind, requestId, status) => {
          const route = (w as ServerResponse & { locals?: { routeLabel?: string } }).locals?.routeLabel ?? 'unmatched';
          metrics.httpRequests.inc({ method: r.method ?? 'unknown', route, status: String(status) });
          logger.info(
            { request_id: requestId, status, code: 'request_timeout', method: r.method, url: redactUrl(r.url ?? ''), route, deadline: kind },
            'request',
          );
        },
      });
      void app(req, res);
    },
  );
  const hub = new EventsHub({
    auth,
    events: peers.events,
    bus,
    logger,
    pingMs: config.WS_PING_SECONDS * 1000,
    principalRecheckMs: config.WS_PRINCIPAL_RECHECK_MS,
    live: feed,
    access,
  });
  metrics.collectedGauge('gateway_websocket_clients', 'WebSocket clients following /events/ws on this gateway', [], (g) => g.set(hub.size));

  /** Counts and logs an answer written outside express, then writes it. */
  const refuse = (socket: Duplex, err: RawError, requestId: string, line: { method?: string; route: string; [k: string]: unknown }) => {
    metrics.httpRequests.inc({ method: line.method ?? 'unknown', route: line.route, status: String(err.status) });
    logger.info({ request_id: requestId, status: err.status, code: err.code, ...line }, 'request');
    writeRawError(socket, err, requestId);
  };

  // Requests node's parser refuses (oversized or malformed headers, a request not received
  // in time) never reach express: they are answered here, in the same shape.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inflight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean; getHeader?(name: string): unknown } })._httpMessage;
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || inflight?.headersSent) {
      socket.destroy();
      return;
    }
    const id = inflight?.getHeader?.('x-request-id');
    refuse(socket, clientErrorOf(err.code), typeof id === 'string' ? id : requestIdFrom(undefined), {
      route: 'unmatched',
      reason: err.code ?? err.message,
    });
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const requestId = requestIdFrom(req.headers['x-request-id']);
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const line = { method: req.method, route: path === '/events/ws' ? '/events/ws' : 'unmatched', upgrade: true };
    if (path !== '/events/ws') {
      return refuse(socket, { status: 404, code: 'not_found', detail: 'no WebSocket endpoint at this path' }, requestId, line);
    }
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      return refuse(socket, { status: 400, code: 'bad_request', detail: 'the Host header is required' }, requestId, line);
    }
    const problem = handshakeProblem(req);
    if (problem) return refuse(socket, problem, requestId, line);
    if (draining) {
      return refuse(socket, { status: 503, code: 'unavailable', detail: 'the gateway is shutting down', headers: { 'Retry-After': '1' } }, requestId, line);
    }
    const wait = wsConnects.take(addressOf(req));
    if (wait > 0) {
      const headers = { 'Retry-After': String(Math.max(1, Math.ceil(wait))) };
      return refuse(socket, { status: 429, code: 'rate_limited', detail: 'too many WebSocket connects from this address', headers }, requestId, line);
    }
    if (hub.open >= config.WS_MAX_CONNECTIONS) {
      const headers = { 'Retry-After': '5' };
      return refuse(socket, { status: 503, code: 'unavailable', detail: 'this gateway holds as many WebSockets as it may', headers }, requestId, line);
    }
    hub.handleUpgrade(req, socket, head);
  });
  resources.defer('sockets', () => hub.close(1001, 'server shutting down'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.GATEWAY_PORT, () => {
      server.off('error', reject);
      resolve();
    });
  });
  resources.defer('api', async () => {
    draining = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    await hub.close(1001, 'server shutting down');
    const force = setTimeout(() => server.closeAllConnections(), Math.min(config.SHUTDOWN_TIMEOUT_MS / 2, 5000));
    await closed;
    clearTimeout(force);
  });
  const httpPort = (server.address() as AddressInfo).port;
  logger.info({ port: httpPort }, 'gateway listening');

  return { httpPort, opsPort: ops.port, server, bus, stop: () => resources.closeAll() };
}
