/**
 * The one mapping between domain error kinds and gRPC status codes. The exact kind, code,
 * problems and extra fields also travel in trailing metadata, so a client rebuilds the
 * same {@link AppError} the server threw.
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { AppError, type ErrorKind } from '../errors.js';

const KIND_TO_STATUS: Record<ErrorKind, status> = {
  invalid: status.INVALID_ARGUMENT,
  bad_request: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  conflict: status.FAILED_PRECONDITION,
  unauthenticated: status.UNAUTHENTICATED,
  forbidden: status.PERMISSION_DENIED,
  unavailable: status.UNAVAILABLE,
  rate_limited: status.RESOURCE_EXHAUSTED,
  too_large: status.RESOURCE_EXHAUSTED,
  internal: status.INTERNAL,
};

const STATUS_TO_KIND: Partial<Record<status, ErrorKind>> = {
  [status.INVALID_ARGUMENT]: 'invalid',
  [status.NOT_FOUND]: 'not_found',
  [status.ALREADY_EXISTS]: 'conflict',
  [status.FAILED_PRECONDITION]: 'conflict',
  [status.ABORTED]: 'conflict',
  [status.UNAUTHENTICATED]: 'unauthenticated',
  [status.PERMISSION_DENIED]: 'forbidden',
  [status.UNAVAILABLE]: 'unavailable',
  [status.DEADLINE_EXCEEDED]: 'unavailable',
  [status.CANCELLED]: 'unavailable',
  // RESOURCE_EXHAUSTED without the detail trailer comes from grpc-js itself (a message past
  // the size limit, memory pressure), never from a rate limit: ours always carry the trailer
  // with kind `rate_limited`. It is the services' own failure and a retry meets it again, so
  // it is `internal` (500), not a 429 asking the client to slow down nor a 503 promising
  // that waiting helps.
  [status.RESOURCE_EXHAUSTED]: 'internal',
};

const DETAIL_KEY = 'x-error-bin';

/** Turns anything thrown by a handler into the error grpc-js sends. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const app = err instanceof AppError ? err : new AppError('internal', 'internal error', { cause: err });
  const metadata = new Metadata();
  metadata.set(
    DETAIL_KEY,
    Buffer.from(JSON.stringify({ kind: app.kind, code: app.code, problems: app.problems, extra: app.extra, retryAfter: app.retryAfter })),
  );
  return { code: KIND_TO_STATUS[app.kind], details: app.message, metadata };
}

/** Rebuilds the {@link AppError} behind a failed call. `target` names the callee for messages. */
export function fromServiceError(err: ServiceError, target: string): AppError {
  const raw = err.metadata?.get(DETAIL_KEY)[0];
  if (raw !== undefined) {
    try {
      const d = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw));
      return new AppError(d.kind, err.details || err.message, {
        code: d.code,
        problems: d.problems,
        extra: d.extra,
        retryAfter: d.retryAfter,
        cause: err,
      });
    } catch {
      // Fall through to the status code.
    }
  }
  const kind = STATUS_TO_KIND[err.code] ?? 'internal';
  const message = kind === 'unavailable' ? `${target} is unavailable (${status[err.code]})` : err.details || err.message;
  return new AppError(kind, message, { cause: err });
}

/** The status name used as a metrics label. */
export function statusName(code: status): string {
  return status[code] ?? String(code);
}

export { KIND_TO_STATUS };
