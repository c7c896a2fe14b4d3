/**
 * First middleware of every request: the request id (echoed when sane, generated otherwise,
 * set on every response and passed to every gRPC call), RED metrics per route template, and
 * one log line per request with credentials stripped from the URL.
 */
import { randomUUID } from 'node:crypto';
import { redactUrl, type Logger, type Metrics } from '@reelbase/lib-platform';
import type { RequestHandler } from 'express';
import type { GatewayLocals } from './locals.js';

const SANE_ID = /^[A-Za-z0-9._:\-/+=]{1,128}$/;
/** Label of requests no route matched: raw paths never become metric labels. */
const UNMATCHED = 'unmatched';
/** Probes are polled constantly; keep them out of the info log. */
const QUIET: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** A request id from an incoming header value, or a fresh one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_ID.test(header) ? header : randomUUID();
}

export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const requestId = requestIdFrom(req.headers['x-request-id']);
    const locals = res.locals as GatewayLocals;
    locals.requestId = requestId;
    locals.ctx = { requestId };
    res.setHeader('x-request-id', requestId);
    res.once('finish', () => {
      const route = locals.routeLabel ?? UNMATCHED;
      const status = res.statusCode;
      const seconds = (performance.now() - started) / 1000;
      const labels = { method: req.method, route, status: String(status) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, seconds);
      const line = {
        request_id: requestId,
        method: req.method,
        route,
        status,
        duration_ms: Math.round(seconds * 1e6) / 1000,
        url: redactUrl(req.originalUrl),
      };
      if (QUIET.has(route) && status < 400) logger.debug(line, 'request');
      else logger.info(line, 'request');
    });
    // HTTP/1.1 requires Host (node's own refusal would be a bare 400, so the server leaves it to us).
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      res.status(400).json({ detail: 'the Host header is required', code: 'bad_request' });
      return;
    }
    next();
  };
}
