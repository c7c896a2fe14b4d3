/**
 * Starts the gateway: gRPC peers, the NATS live feed, the auth cache, the express app and the
 * WebSocket hub on one HTTP server, plus the ops server (/healthz, /readyz, /metrics without
 * credentials, for Prometheus) on its own port like every service. Tests pass fake adapters
 * (peers, bus, readiness).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  connectNats,
  createLogger,
  Metrics,
  natsNames,
  Readiness,
  startOpsServer,
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
import { RateLimiter } from './domain/rate.limiter.js';
import { createGatewayBus, type GatewayBus } from './live/gateway.bus.js';
import { startNatsFeed } from './live/nats.feed.js';
import { EventsHub } from './ws/events.hub.js';

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

const ANNOUNCE_FLUSH_MS = 1000;

/**
 * Publishes `{"user_id"}` on the revocations subject that every gateway follows, and waits
 * (briefly) for the server to have it. A lost message only delays the effect elsewhere until
 * the User event or the cache expiry, so it never fails the write that was already committed.
 */
function userChangeAnnouncer(nc: NatsConnection, subject: string, logger: Logger): (userId: string) => Promise<void> {
  return async (userId: string) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      nc.publish(subject, JSON.stringify({ user_id: userId }));
      await Promise.race([
        nc.flush(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('NATS flush timed out')), ANNOUNCE_FLUSH_MS);
        }),
      ]);
    } catch (err) {
      logger.warn({ err, user_id: userId }, 'could not announce a User change to other gateways');
    } finally {
      clearTimeout(timer);
    }
  };
}

export function startGateway(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.LOG_LEVEL),
  adapters: Partial<GatewayAdapters> = {},
): Promise<RunningGateway> {
  return withResources(logger, (resources) => openGateway(config, logger, adapters, resources), config.SHUTDOWN_TIMEOUT_MS);
}

async function openGateway(
  config: GatewayConfig,
  logger: Logger,
  adapters: Partial<GatewayAdapters>,
  resources: ResourceStack,
): Promise<RunningGateway> {
  const metrics = new Metrics('gateway');
  let conns: PeerConnections | undefined;
  const peers = adapters.peers ?? (conns = connectPeers(
    { auth: config.AUTH_ADDR, records: config.RECORDS_ADDR, events: config.EVENTS_ADDR },
    config.RPC_DEADLINE_MS,
    metrics,
  )).peers;
  if (conns) resources.defer('peers', () => conns.close());

  let nc: NatsConnection | undefined;
  const bus = adapters.bus ?? createGatewayBus(logger);
  if (!adapters.bus) {
    const natsConn = (nc = await connectNats(config.NATS_URL, 'gateway', logger));
    resources.defer('nats', () => natsConn.drain());
    const feed = startNatsFeed(natsConn, natsNames(config.NATS_PREFIX), bus, logger);
    resources.defer('live feed', () => feed.stop());
  }

  let readiness = adapters.readiness;
  if (!readiness) {
    readiness = new Readiness(1500);
    if (conns) for (const [name, check] of Object.entries(conns.health)) readiness.add(name, check);
    const natsConn = nc;
    if (natsConn) {
      readiness.add('nats', async () => {
        if (natsConn.isClosed()) throw new Error('NATS connection closed');
        await natsConn.flush();
      });
    }
  }

  // Subscribed before the hub, so a socket re-check never reads an entry about to be dropped.
  const auth = new AuthCache((token, ctx) => peers.auth.authenticate({ token }, ctx), config.AUTH_CACHE_SECONDS);
  resources.defer('auth cache', auth.subscribeTo(bus));
  const limiter = new RateLimiter(config.RATE_LIMIT_RPS, config.RATE_LIMIT_BURST);
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
    draining: () => draining,
    userChanged,
  });

  // Opened before the API and so closed after it: Prometheus can still scrape while the API drains.
  const ops = await startOpsServer({ port: config.HTTP_PORT, metrics, readiness, logger });
  resources.defer('ops', () => ops.close());

  const server = createServer({ keepAliveTimeout: 65_000 }, app);
  const hub = new EventsHub({ auth, events: peers.events, bus, logger, pingMs: config.WS_PING_SECONDS * 1000 });
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/events/ws') return hub.handleUpgrade(req, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
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
