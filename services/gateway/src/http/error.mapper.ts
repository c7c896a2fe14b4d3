/**
 * The one mapping from failures to HTTP: AppError kinds, body-parser errors and anything
 * unexpected. Client mistakes never become a 500; internal errors are logged with the
 * request id and answered without details.
 */
import { appErrorAnswer, isAppError, requestShape, type HttpError, type Logger, type RequestShape } from '@reelbase/lib-platform';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { localsOf } from './locals.js';

// The AppError → HTTP mapping is lib-platform's (http/error.answer.ts): records builds the answer an
// Idempotency-Key keeps with the same one.
export { locateProblems, requestShape, statusOfKind, type HttpError, type RequestShape } from '@reelbase/lib-platform';

const CLIENT_STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * Maps anything thrown by a route to the response the client gets; `shape` locates the
 * problems of a 422 (see {@link locateProblems}).
 */
export function toHttpError(err: unknown, shape?: RequestShape): HttpError {
  if (isAppError(err)) return appErrorAnswer(err, shape);
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
