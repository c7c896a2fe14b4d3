/**
 * The one mapping from failures to HTTP: AppError kinds, body-parser errors and anything
 * unexpected. Client mistakes never become a 500; internal errors are logged with the
 * request id and answered without details.
 */
import { isAppError, type ErrorKind, type Logger, type Problem } from '@reelbase/lib-platform';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { localsOf } from './locals.js';

/** What the error middleware sends. */
export interface HttpError {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const KIND_STATUS: Record<ErrorKind, number> = {
  invalid: 422,
  bad_request: 400,
  not_found: 404,
  conflict: 409,
  unauthenticated: 401,
  forbidden: 403,
  unavailable: 503,
  rate_limited: 429,
  too_large: 413,
  internal: 500,
};

const CLIENT_STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Which of a request's input names are path and query parameters; every other name is in the body. */
export interface RequestShape {
  pathParams: ReadonlySet<string>;
  queryParams: ReadonlySet<string>;
  /** Where a name that is neither is: the body, or the query of a request that has no body (GET). */
  otherwise?: 'body' | 'query';
}

const SOURCES: ReadonlySet<unknown> = new Set(['body', 'query', 'path', 'header']);

/**
 * Services name the field of a problem (`["project_id"]`, `["data", "user"]`); where the
 * client sent it is the gateway's knowledge, so the `loc` a client sees gets its `path`,
 * `query` or `body` head here. The gateway's own validation already locates its problems.
 */
export function locateProblems(problems: readonly Problem[], shape?: RequestShape): Problem[] {
  return problems.map((p) => {
    // A service's `too_many_errors` entry names no field: it is located at the source alone.
    if (p.loc.length === 0) return { ...p, loc: [shape?.otherwise ?? 'body'] };
    const head = p.loc[0];
    if (SOURCES.has(head)) return p;
    const name = String(head);
    const source = shape?.pathParams.has(name) ? 'path' : shape?.queryParams.has(name) ? 'query' : (shape?.otherwise ?? 'body');
    return { ...p, loc: [source, ...p.loc] };
  });
}

/** The shape of a request: path parameters from the matched route's template, query names as sent. */
export function requestShape(routeTemplate: string | undefined, query: unknown, method = 'POST'): RequestShape {
  const pathParams = new Set([...(routeTemplate ?? '').matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!));
  const queryParams = new Set(query !== null && typeof query === 'object' ? Object.keys(query) : []);
  return { pathParams, queryParams, otherwise: method === 'GET' || method === 'HEAD' ? 'query' : 'body' };
}

/** The HTTP status for an error kind. */
export function statusOfKind(kind: ErrorKind): number {
  return KIND_STATUS[kind];
}

/**
 * Maps anything thrown by a route to the response the client gets; `shape` locates the
 * problems of a 422 (see {@link locateProblems}).
 */
export function toHttpError(err: unknown, shape?: RequestShape): HttpError {
  if (isAppError(err)) {
    const status = KIND_STATUS[err.kind] ?? 500;
    if (err.kind === 'invalid') {
      const detail = err.problems.length > 0 ? locateProblems(err.problems, shape) : [{ loc: ['body'], msg: err.message, type: 'value_error' }];
      return { status, body: { detail } };
    }
    if (err.kind === 'internal') return { status, body: { detail: 'internal error', code: 'internal' } };
    const body = { ...err.extra, detail: err.message, code: err.code };
    if (err.kind === 'unauthenticated') return { status, body, headers: { 'www-authenticate': 'Bearer' } };
    // A 503 that knows when to try again (a busy gate) says so too.
    if (err.kind === 'rate_limited' || (err.kind === 'unavailable' && err.retryAfter !== undefined)) {
      return { status, body, headers: { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfter ?? 1))) } };
    }
    return { status, body };
  }
  const e = err as { type?: string; status?: number; statusCode?: number; message?: string } | undefined;
  if (e?.type === 'entity.parse.failed') {
    return {
      status: 422,
      body: { detail: [{ loc: ['body'], msg: `JSON decode error: ${e.message ?? 'invalid JSON'}`, type: 'json_invalid' }] },
    };
  }
  if (e?.type === 'entity.too.large') {
    return { status: 413, body: { detail: 'request body is too large', code: 'payload_too_large' } };
  }
  const status = e?.status ?? e?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: { detail: e?.message ?? 'bad request', code: CLIENT_STATUS_CODES[status] ?? 'bad_request' } };
  }
  return { status: 500, body: { detail: 'internal error', code: 'internal' } };
}

/** Express error middleware: maps, logs server-side failures, and answers once. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const mapped = toHttpError(err, requestShape(localsOf(res).routeLabel, req.query, req.method));
    if (mapped.status >= 500) {
      const requestId = localsOf(res).requestId;
      const level = mapped.status === 500 ? 'error' : 'warn';
      logger[level]({ err, request_id: requestId, method: req.method, route: localsOf(res).routeLabel }, 'request failed');
    }
    if (mapped.headers) res.set(mapped.headers);
    res.status(mapped.status).json(mapped.body);
  };
}

/** 404 for any path no route matches. */
export const notFoundHandler: RequestHandler = (req, res) => {
  res.status(404).json({ detail: `no route for ${req.method} ${req.path}`, code: 'not_found' });
};
