/**
 * Starts the gateway: gRPC peers, the NATS live feed, the auth cache, the express app and the
 * WebSocket hub on one HTTP server, plus the ops server (/healthz, /readyz, /metrics without
 * credentials, for Prometheus) on its own port like every service. Tests pass fake adapters
 * (peers, bus, readiness).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectNats, createLogger, Metrics, natsNames, Readiness, startOpsServer, type Logger, type NatsConnection } from '@reelbase/lib-platform';
import { createApp } from './app.js';
import { connectPeers, type PeerConnections, type Peers } from './clients/peers.js';
import type { GatewayConfig } from './config.js';
import { AuthCache } from './domain/auth.cache.js';
import { RateLimiter } from './domain/rate.limiter.js';
import { createGatewayBus, type GatewayBus } from './live/gateway.bus.js';
import { startNatsFeed, type LiveFeed } from './live/nats.feed.js';
import { EventsHub } from './ws/events.hub.js';

/** Replaceable adapters; anything omitted is the real thing. */
export interface GatewayAdapters {
  peers: Peers;
  /** A bus fed by the caller instead of NATS (no NATS connection is made). */
  bus: GatewayBus;
  readiness: Readiness;
}

export interface RunningGateway {
  /** The API port (GATEWAY_PORT). */
  httpPort: number;
  /** The ops port (HTTP_PORT). */
  opsPort: number;
  server: Server;
  bus: GatewayBus;
  stop(): Promise<void>;
}

export async function startGateway(
  config: GatewayConfig,
  logger: Logger = createLogger('gateway', config.LOG_LEVEL),
  adapters: Partial<GatewayAdapters> = {},
): Promise<RunningGateway> {
  const metrics = new Metrics('gateway');
  let conns: PeerConnections | undefined;
  const peers = adapters.peers ?? (conns = connectPeers(
    { auth: config.AUTH_ADDR, records: config.RECORDS_ADDR, events: config.EVENTS_ADDR },
    config.RPC_DEADLINE_MS,
    metrics,
  )).peers;

  let nc: NatsConnection | undefined;
  let feed: LiveFeed | undefined;
  const bus = adapters.bus ?? createGatewayBus(logger);
  if (!adapters.bus) {
    nc = await connectNats(config.NATS_URL, 'gateway', logger);
    feed = startNatsFeed(nc, natsNames(config.NATS_PREFIX), bus, logger);
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
  const offAuth = auth.subscribeTo(bus);
  const limiter = new RateLimiter(config.RATE_LIMIT_RPS, config.RATE_LIMIT_BURST);
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
  });

  const server = createServer({ keepAliveTimeout: 65_000 }, app);
  const hub = new EventsHub({ auth, events: peers.events, bus, logger, pingMs: config.WS_PING_SECONDS * 1000 });
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/events/ws') return hub.handleUpgrade(req, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.GATEWAY_PORT, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const httpPort = (server.address() as AddressInfo).port;
  logger.info({ port: httpPort }, 'gateway listening');
  let ops: Awaited<ReturnType<typeof startOpsServer>>;
  try {
    ops = await startOpsServer({ port: config.HTTP_PORT, metrics, readiness, logger });
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await hub.close(1001, 'server shutting down');
    feed?.stop();
    offAuth();
    if (nc) await nc.drain().catch(() => undefined);
    conns?.close();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await hub.close(1001, 'server shutting down');
      feed?.stop();
      offAuth();
      const force = setTimeout(() => server.closeAllConnections(), Math.min(config.SHUTDOWN_TIMEOUT_MS / 2, 5000));
      await closed;
      clearTimeout(force);
      // After the API has drained, so Prometheus can still scrape while it does.
      await ops.close();
      if (nc) await nc.drain().catch((err: unknown) => logger.warn({ err }, 'NATS drain failed'));
      conns?.close();
      logger.info('gateway stopped');
    })());

  return { httpPort, opsPort: ops.port, server, bus, stop };
}
