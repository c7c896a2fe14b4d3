/**
 * Errors of the client, one class per kind of answer, so callers catch what they can handle:
 * `catch (err) { if (err instanceof NotFound) ... }`. Every error from an answer carries its HTTP
 * `status`, the machine `code` and the human `detail` of the error body; none carries the API key.
 */

/** One problem of a 422 answer: where (`loc`, e.g. `["body","data","code"]`), what and its type. */
export interface Problem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Any failure of a call: an error answer, a connection failure or a timeout. */
export class ReelbaseError extends Error {
  override name = 'ReelbaseError';
  /** The HTTP status, or 0 when no answer arrived. */
  readonly status: number;
  /** The machine code of the error body (`not_found`, `duplicate_code`, ...), or the transport's. */
  readonly code: string;
  /** The human sentence of the error body. */
  readonly detail: string;
  /** The parsed error body, when there was one. */
  readonly body: unknown;
  /** The request's `x-request-id`, to find it in the server's logs. */
  readonly requestId: string | undefined;

  constructor(message: string, init: { status?: number; code?: string; detail?: string; body?: unknown; requestId?: string; cause?: unknown } = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status ?? 0;
    this.code = init.code ?? 'error';
    this.detail = init.detail ?? message;
    this.body = init.body;
    this.requestId = init.requestId;
  }
}

/** 400: a malformed request. */
export class BadRequest extends ReelbaseError {
  override name = 'BadRequest';
}
/** 401: no valid token or API key. */
export class AuthenticationError extends ReelbaseError {
  override name = 'AuthenticationError';
}
/** 403: the caller's role may not do this. */
export class PermissionDenied extends ReelbaseError {
  override name = 'PermissionDenied';
}
/** 404: no such record, route or resource (or it is retired). */
export class NotFound extends ReelbaseError {
  override name = 'NotFound';
}
/** 409: `duplicate_code`, `stale_write`, `idempotency_conflict`, `lease_lost`, ... (see `code`). */
export class Conflict extends ReelbaseError {
  override name = 'Conflict';
}
/** 413: the body is over the server's limit. */
export class PayloadTooLarge extends ReelbaseError {
  override name = 'PayloadTooLarge';
}
/** 422: the request was not valid; `problems` lists every problem at once. */
export class ValidationError extends ReelbaseError {
  override name = 'ValidationError';
  get problems(): Problem[] {
    const detail = (this.body as { detail?: unknown } | undefined)?.detail;
    return Array.isArray(detail) ? (detail as Problem[]) : [];
  }
}
/** 429: too many requests; `retryAfterSeconds` from `Retry-After`. */
export class RateLimited extends ReelbaseError {
  override name = 'RateLimited';
  retryAfterSeconds: number | undefined;
}
/** 5xx: the server failed or a dependency is down (503 `unavailable`). */
export class ServerError extends ReelbaseError {
  override name = 'ServerError';
}
/** No answer: the connection was refused or cut (`code` is the system's, e.g. `ECONNRESET`). */
export class ConnectionError extends ReelbaseError {
  override name = 'ConnectionError';
}
/** No answer in time (`code` `connect_timeout` or `read_timeout`). */
export class TimeoutError extends ConnectionError {
  override name = 'TimeoutError';
}

const BY_STATUS: Record<number, typeof ReelbaseError> = {
  400: BadRequest,
  401: AuthenticationError,
  403: PermissionDenied,
  404: NotFound,
  409: Conflict,
  413: PayloadTooLarge,
  422: ValidationError,
  429: RateLimited,
};

/** Seconds from a `Retry-After` header (delta seconds or an HTTP date), else undefined. */
export function retryAfterSeconds(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The error for an answer with an error status. */
export function errorFromAnswer(method: string, path: string, status: number, body: unknown, headers: Headers): ReelbaseError {
  const b = (body && typeof body === 'object' ? body : {}) as { detail?: unknown; code?: unknown };
  let detail: string;
  let code: string;
  if (Array.isArray(b.detail)) {
    const problems = b.detail as Problem[];
    code = 'validation_error';
    detail = problems.map((p) => `${(p.loc ?? []).join('.')}: ${p.msg}`).join('; ');
  } else {
    code = typeof b.code === 'string' ? b.code : `http_${status}`;
    detail = typeof b.detail === 'string' ? b.detail : typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`;
  }
  const Kind = BY_STATUS[status] ?? (status >= 500 ? ServerError : ReelbaseError);
  const err = new Kind(`${method} ${path}: ${status} ${code}: ${detail}`, {
    status,
    code,
    detail,
    body,
    requestId: headers.get('x-request-id') ?? undefined,
  });
  if (err instanceof RateLimited) err.retryAfterSeconds = retryAfterSeconds(headers.get('retry-after'));
  return err;
}
