/**
 * The small HTTP server every non-HTTP service runs beside its gRPC port:
 * `/healthz` (alive), `/readyz` (dependencies answer) and `/metrics` (Prometheus).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Readiness } from '../readiness.js';

export interface OpsServerOptions {
  port: number;
  /** Interface to listen on (BIND_HOST); all of them by default. */
  host?: string;
  metrics: Metrics;
  readiness: Readiness;
  logger: Logger;
}

/** Starts the ops server; resolves once it listens. */
export async function startOpsServer(opts: OpsServerOptions): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  opts.metrics.watchReadiness(opts.readiness);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return send(405, JSON.stringify({ detail: 'method not allowed', code: 'method_not_allowed' }));
    if (path === '/healthz') return send(200, JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      opts.readiness.run().then(
        (r) =>
          send(
            r.ready ? 200 : 503,
            JSON.stringify(
              r.ready
                ? { status: 'ready', checks: r.checks }
                : { status: 'unavailable', detail: `${r.failing} is not answering`, code: 'unavailable', checks: r.checks },
            ),
          ),
        (err) => send(503, JSON.stringify({ status: 'unavailable', detail: String(err), code: 'unavailable' })),
      );
      return;
    }
    if (path === '/metrics') {
      opts.metrics.registry.metrics().then(
        (text) => send(200, text, opts.metrics.registry.contentType),
        (err) => send(500, String(err), 'text/plain'),
      );
      return;
    }
    send(404, JSON.stringify({ detail: 'not found', code: 'not_found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  opts.logger.info({ port }, 'ops server listening (/healthz, /readyz, /metrics)');
  return {
    server,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
