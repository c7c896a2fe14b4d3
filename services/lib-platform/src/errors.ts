/**
 * Domain errors. Every failure a service reports carries a kind; the kind alone decides
 * the gRPC status (grpc/status.ts) and, in the gateway, the HTTP status.
 */
import { capProblems, MAX_PROBLEMS, type Problem } from './problems.js';

/** What went wrong, independent of transport. */
export type ErrorKind =
  'invalid' | 'bad_request' | 'not_found' | 'conflict' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'rate_limited' | 'too_large' | 'internal';

/** Optional details attached to an {@link AppError}. */
export interface AppErrorOptions {
  /** Machine code sent to clients (`duplicate_code`, `stale_write`, ...); defaults by kind. */
  code?: string;
  /** Validation problems (kind `invalid`). */
  problems?: Problem[];
  /** Extra JSON-safe fields merged into the error body (e.g. `usage`). */
  extra?: Record<string, unknown>;
  /** Seconds a client should wait (kind `rate_limited`). */
  retryAfter?: number;
  cause?: unknown;
}

const DEFAULT_CODES: Record<ErrorKind, string> = {
  invalid: 'validation_error',
  bad_request: 'bad_request',
  not_found: 'not_found',
  conflict: 'conflict',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  unavailable: 'unavailable',
  rate_limited: 'rate_limited',
  too_large: 'payload_too_large',
  internal: 'internal',
};

/** The one error type services throw for expected failures. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly kind: ErrorKind;
  readonly code: string;
  readonly problems: Problem[];
  readonly extra: Record<string, unknown>;
  readonly retryAfter?: number;

  constructor(kind: ErrorKind, message: string, opts: AppErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.kind = kind;
    this.code = opts.code ?? DEFAULT_CODES[kind];
    this.problems = opts.problems ?? [];
    this.extra = opts.extra ?? {};
    this.retryAfter = opts.retryAfter;
  }

  /**
   * A 422-style error with one or more problems, capped where it is made: at most `max`
   * (100) problems then one `too_many_errors` entry, echoed input clipped (problems.ts).
   */
  static invalid(problems: Problem[], message = 'request validation failed', max = MAX_PROBLEMS): AppError {
    return new AppError('invalid', message, { problems: capProblems(problems, max) });
  }

  static notFound(message: string): AppError {
    return new AppError('not_found', message);
  }

  static conflict(code: string, message: string, extra?: Record<string, unknown>): AppError {
    return new AppError('conflict', message, { code, extra });
  }

  static unavailable(message: string, cause?: unknown): AppError {
    return new AppError('unavailable', message, { cause });
  }
}

/** True when `err` is an {@link AppError}. */
export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
