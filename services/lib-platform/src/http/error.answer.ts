/**
 * What an {@link AppError} answers over HTTP: its status, its JSON body and the headers it needs
 * (docs/api-notes.md, "Errors"). The gateway answers every failure through it (its error mapper),
 * and the records service builds with it the answer an Idempotency-Key keeps for a write that
 * carried its key and failed with a client mistake (docs/architecture.md, "Idempotency keys"): one
 * mapping, so the kept answer is byte for byte the one the client got.
 */
import { AppError, type ErrorKind } from '../errors.js';
import type { Problem } from '../problems.js';

/** An answer before it is sent: the status, the body (serialised as JSON) and extra headers. */
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

/** The HTTP status for an error kind. */
export function statusOfKind(kind: ErrorKind): number {
  return KIND_STATUS[kind];
}

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

/** The answer of an AppError; `shape` locates the problems of a 422 (see {@link locateProblems}). */
export function appErrorAnswer(err: AppError, shape?: RequestShape): HttpError {
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

/**
 * True when an answer of `status` is kept for its Idempotency-Key: every answer below 500 except
 * 429 (try again later) (docs/api-notes.md, "Idempotent retries").
 */
export const isKeptStatus = (status: number): boolean => status < 500 && status !== 429;
