/**
 * gRPC clients wrapped once: each unary method becomes `(request, ctx) => Promise<response>`
 * with a deadline on every call, the caller's context in metadata signed with the internal
 * secret (internal.auth.ts), client-side metrics, and errors turned back into {@link AppError}s. A peer that is down fails fast with
 * `unavailable` (no wait-for-ready), which the gateway answers with 503.
 */
import {
  credentials,
  status,
  type CallOptions,
  type Client,
  type ClientUnaryCall,
  type Metadata,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { toMetadata, type CallContext } from '../context.js';
import { AppError } from '../errors.js';
import { INTERNAL_AUTH_REFUSED, InternalAuth } from './internal.auth.js';
import type { Metrics } from '../metrics.js';
import { fromServiceError, statusName } from './status.js';

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

export interface CallOpts {
  /** Milliseconds before the call fails with `unavailable`; defaults to the client's. */
  deadlineMs?: number;
}

/** The promise-returning form of a ts-proto client (unary methods only). */
export type PromiseClient<C> = {
  [K in keyof C as C[K] extends UnaryMethod<any, any> ? K : never]: C[K] extends UnaryMethod<infer Req, infer Res>
    ? (request: Req, ctx: CallContext, opts?: CallOpts) => Promise<Res>
    : never;
};

export interface ClientOptions {
  /** Name used in metrics and error messages, e.g. "records". */
  name: string;
  address: string;
  /** INTERNAL_AUTH_SECRET: every call is signed with it (at least 32 bytes). */
  internalAuthSecret: string;
  deadlineMs?: number;
  metrics?: Metrics;
}

type ClientCtor<C> = new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object) => C;

/** A connected client: `call.<method>(req, ctx)` and `close()`. */
export interface GrpcClient<C> {
  readonly raw: C;
  readonly call: PromiseClient<C>;
  close(): void;
}

/** Creates a client for `definition` at `opts.address`. */
export function createGrpcClient<C extends Client>(Ctor: ClientCtor<C>, definition: ServiceDefinition<any>, opts: ClientOptions): GrpcClient<C> {
  const raw = new Ctor(opts.address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    // Per-call bookkeeping nobody reads (Prometheus metrics cover calls) and transparent
    // retries (writes are not idempotent; callers decide) both cost CPU on every call.
    'grpc.enable_channelz': 0,
    'grpc.enable_retries': 0,
    'grpc.keepalive_timeout_ms': 10_000,
    // Well above the largest events page (EVENTS_PAGE_MAX_BYTES: 4 MiB by default, at most
    // 8 MiB, plus one event that may pass it), so reading the log never meets this limit.
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    // Reconnect quickly after a peer restarts instead of backing off for minutes.
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2000,
  });
  const defaultDeadline = opts.deadlineMs ?? 5000;
  const auth = new InternalAuth(opts.internalAuthSecret);
  const call: Record<string, unknown> = {};
  for (const [method, def] of Object.entries(definition)) {
    if (def.requestStream || def.responseStream) continue;
    const fn = (raw as unknown as Record<string, UnaryMethod<unknown, unknown>>)[method]!.bind(raw);
    const label = `${opts.name}/${def.originalName ?? method}`;
    const path = def.path;
    call[method] = (request: unknown, ctx: CallContext, callOpts: CallOpts = {}) =>
      new Promise((resolve, reject) => {
        const started = process.hrtime.bigint();
        const deadline = new Date(Date.now() + (callOpts.deadlineMs ?? defaultDeadline));
        // grpc-js captures a caller stack trace (`new Error()`) on every call; on the hot
        // path that costs more than the rest of the call setup. Failures become AppErrors
        // with their own stack, so the capture is switched off for the synchronous start.
        const stackLimit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          const md = toMetadata(ctx);
          auth.sign(md, path);
          fn(request, md, { deadline }, (err, res) => {
            opts.metrics?.rpcClientDuration.observe(
              { method: label, code: err ? statusName(err.code) : 'OK' },
              Number(process.hrtime.bigint() - started) / 1e9,
            );
            if (!err) resolve(res);
            // Our own key was refused (keys differ, or being rotated): a fault of the deployment,
            // not of the end user's credentials, so never a 401 to them.
            else if (err.code === status.UNAUTHENTICATED && err.details?.startsWith(INTERNAL_AUTH_REFUSED)) {
              reject(AppError.unavailable(`${opts.name} refused the call (${err.details}); is INTERNAL_AUTH_SECRET the same in every service?`, err));
            } else reject(fromServiceError(err, opts.name));
          });
        } finally {
          Error.stackTraceLimit = stackLimit;
        }
      });
  }
  return { raw, call: call as PromiseClient<C>, close: () => raw.close() };
}
