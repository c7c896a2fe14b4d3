/**
 * The one mapping between domain error kinds and gRPC status codes. The exact kind, code,
 * problems and extra fields also travel in trailing metadata, so a client rebuilds the
 * same {@link AppError} the server threw, within the size a trailer may have (see
 * {@link DETAIL_BUDGET_BYTES}).
 */
import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { AppError, type ErrorKind } from '../errors.js';
import type { Problem } from '../problems.js';
import { clipEcho, leftOutBy, tooManyMsg } from '../problems.js';

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

/**
 * Trailers travel as HTTP/2 headers, and a peer refuses a header list past 64 KiB (Node's
 * default `maxHeaderListSize`) with RST_STREAM, which the caller sees as a bare INTERNAL. The
 * detail trailer (base64 of its JSON) stays under this many bytes and the status message under
 * {@link MAX_MESSAGE_CHARS} characters (at most 9 bytes each once percent-encoded, 9 KB), so the
 * trailers stay under 58 KB and every error crosses whole or, past the budget, as the smaller
 * error {@link fitDetail} makes.
 */
export const DETAIL_BUDGET_BYTES = 48 * 1024;

/** The status message (grpc-message) keeps at most this many characters. */
export const MAX_MESSAGE_CHARS = 1000;

interface Detail {
  kind: ErrorKind;
  code: string;
  problems: Problem[];
  extra: Record<string, unknown>;
  retryAfter?: number;
}

const encodedSize = (d: Detail): number => Math.ceil(Buffer.byteLength(JSON.stringify(d)) / 3) * 4;

/** `problems` keeping its first `k`, the rest counted by one `too_many_errors` entry. */
function keepFirst(problems: readonly Problem[], k: number): Problem[] {
  const tail = problems[problems.length - 1];
  const carried = leftOutBy(tail);
  const list = carried > 0 ? problems.slice(0, -1) : problems;
  if (k >= list.length) return [...problems];
  const more = list.length - k + carried;
  const head = list[k]!.loc[0];
  const loc = head === 'body' || head === 'query' || head === 'path' ? [head] : [];
  return [...list.slice(0, k), { loc, msg: tooManyMsg(more, k), type: 'too_many_errors' }];
}

/**
 * The detail as sent: unchanged when its encoding fits {@link DETAIL_BUDGET_BYTES}; else the
 * most leading problems that fit, the rest counted by a `too_many_errors` entry; else (an
 * `extra` too large) kind, code and that count only. Kind and code always cross, so the
 * caller still answers the right status.
 */
export function fitDetail(d: Detail): Detail {
  if (encodedSize(d) <= DETAIL_BUDGET_BYTES) return d;
  const withFirst = (k: number): Detail => ({ ...d, problems: keepFirst(d.problems, k) });
  if (encodedSize(withFirst(0)) <= DETAIL_BUDGET_BYTES) {
    let lo = 0;
    let hi = d.problems.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (encodedSize(withFirst(mid)) <= DETAIL_BUDGET_BYTES) lo = mid;
      else hi = mid - 1;
    }
    return withFirst(lo);
  }
  const problems = d.problems.length > 0 ? keepFirst(d.problems, 0) : [];
  return { kind: d.kind, code: d.code, problems, extra: {}, retryAfter: d.retryAfter };
}

/** The detail trailer of `app` as sent. */
const detailOf = (app: AppError): Detail => fitDetail({ kind: app.kind, code: app.code, problems: app.problems, extra: app.extra, retryAfter: app.retryAfter });

/** Turns anything thrown by a handler into the error grpc-js sends. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  const app = err instanceof AppError ? err : new AppError('internal', 'internal error', { cause: err });
  const metadata = new Metadata();
  metadata.set(DETAIL_KEY, Buffer.from(JSON.stringify(detailOf(app))));
  return { code: KIND_TO_STATUS[app.kind], details: clipEcho(app.message, MAX_MESSAGE_CHARS), metadata };
}

/**
 * The {@link AppError} a caller rebuilds from `err` once it crossed a call ({@link fromServiceError}
 * of {@link toServiceError}): the message clipped, the detail fitted to its budget and through JSON.
 * A service that answers for its caller (an Idempotency-Key's kept answer) builds it from this.
 */
export function asCrossed(err: AppError): AppError {
  const d = JSON.parse(JSON.stringify(detailOf(err))) as Detail;
  return new AppError(d.kind, clipEcho(err.message, MAX_MESSAGE_CHARS), { code: d.code, problems: d.problems, extra: d.extra, retryAfter: d.retryAfter });
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
