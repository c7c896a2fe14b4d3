/**
 * gRPC clients wrapped once: each unary method becomes `(request, ctx) => Promise<response>`
 * (streaming methods: `clientStream` and `serverStream`, bounded by idle time rather than a total deadline)
 * with a deadline on every call, the caller's context in metadata signed with the internal
 * secret together with a digest of the request (internal.auth.ts; the request is serialised
 * once, here, and its bytes handed to grpc-js as they are), client-side metrics, and errors turned back into {@link AppError}s. A peer that is down fails fast with
 * `unavailable` (no wait-for-ready), which the gateway answers with 503.
 */
import {
  credentials,
  status,
  type CallOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  type ClientWritableStream,
  type Metadata,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import { toMetadata, type CallContext } from '../context.js';
import { AppError } from '../errors.js';
import { INTERNAL_AUTH_REFUSED, InternalAuth, STREAM_BODY } from './internal.auth.js';
import type { Metrics } from '../metrics.js';
import { fromServiceError, statusName } from './status.js';

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

type ClientStreamMethod<Req, Res> = (
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientWritableStream<Req>;

type ServerStreamMethod<Req, Res> = (request: Req, metadata?: Metadata, options?: Partial<CallOptions>) => ClientReadableStream<Res>;

/** Names of the client-streaming methods of a ts-proto client. */
export type ClientStreamKeys<C> = { [K in keyof C]: C[K] extends ClientStreamMethod<any, any> ? K : never }[keyof C] & string;
/** Names of the server-streaming methods of a ts-proto client. */
export type ServerStreamKeys<C> = { [K in keyof C]: C[K] extends ServerStreamMethod<any, any> ? K : never }[keyof C] & string;

/** Options of a streaming call. */
export interface StreamOpts {
  /**
   * Milliseconds the call may make no progress while this side waits on it (a write that does
   * not drain, the answer after `end()`, the next message of a read) before it is cancelled with
   * `unavailable`; defaults to the client's `streamIdleMs`. Time spent by the caller between
   * writes or reads does not count.
   */
  idleMs?: number;
}

/** An open client-streaming call. */
export interface ClientStreamCall<Req, Res> {
  /** Sends one message; resolves when the transport takes more (back-pressure), rejects once the call failed. */
  write(message: Req): Promise<void>;
  /** Half-closes and resolves with the answer. */
  end(): Promise<Res>;
  /** Cancels the call (the server sees CANCELLED); a pending write or end rejects. */
  cancel(): void;
}

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
  /** Default idle limit of streaming calls (see {@link StreamOpts.idleMs}); 30 s. */
  streamIdleMs?: number;
  metrics?: Metrics;
}

/** The request is serialised before it is signed; grpc-js sends those bytes as they are. */
const asIs = (bytes: Buffer): Buffer => bytes;

type ClientCtor<C> = new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options?: object) => C;

/** A connected client: `call.<method>(req, ctx)` and `close()`. */
export interface GrpcClient<C> {
  readonly raw: C;
  readonly call: PromiseClient<C>;
  /** Opens a client-streaming call of `method`. */
  clientStream<K extends ClientStreamKeys<C>>(
    method: K,
    ctx: CallContext,
    opts?: StreamOpts,
  ): C[K] extends ClientStreamMethod<infer Req, infer Res> ? ClientStreamCall<Req, Res> : never;
  /** Calls a server-streaming `method`: its messages in order; errors are {@link AppError}s. */
  serverStream<K extends ServerStreamKeys<C>>(
    method: K,
    request: C[K] extends ServerStreamMethod<infer Req, any> ? Req : never,
    ctx: CallContext,
    opts?: StreamOpts,
  ): C[K] extends ServerStreamMethod<any, infer Res> ? AsyncIterable<Res> & { cancel(): void } : never;
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
          const bytes = def.requestSerialize(request);
          auth.sign(md, path, bytes);
          raw.makeUnaryRequest(path, asIs, def.responseDeserialize, bytes, md, { deadline }, (err: ServiceError | null, res?: unknown) => {
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
  const streamIdle = opts.streamIdleMs ?? 30_000;
  const mapError = (err: ServiceError): AppError =>
    err.code === status.UNAUTHENTICATED && err.details?.startsWith(INTERNAL_AUTH_REFUSED)
      ? AppError.unavailable(`${opts.name} refused the call (${err.details}); is INTERNAL_AUTH_SECRET the same in every service?`, err)
      : fromServiceError(err, opts.name);
  const pathOf = (method: string) => {
    const def = definition[method];
    if (!def) throw new Error(`${opts.name}: no method ${method}`);
    return { def, label: `${opts.name}/${def.originalName ?? method}` };
  };

  function clientStream(method: string, ctx: CallContext, sOpts: StreamOpts = {}): ClientStreamCall<unknown, unknown> {
    const { def, label } = pathOf(method);
    const idleMs = sOpts.idleMs ?? streamIdle;
    const started = process.hrtime.bigint();
    const md = toMetadata(ctx);
    auth.sign(md, def.path, STREAM_BODY);
    let failure: AppError | undefined;
    let settled = false;
    let resolveRes!: (v: unknown) => void;
    let rejectRes!: (e: AppError) => void;
    const response = new Promise<unknown>((res, rej) => {
      resolveRes = res;
      rejectRes = rej;
    });
    // Observed by end(); a failure before end() surfaces through write().
    response.catch(() => {});
    const fail = (err: AppError) => {
      if (!failure) failure = err;
      return failure;
    };
    const fn = (raw as unknown as Record<string, ClientStreamMethod<unknown, unknown>>)[method]!.bind(raw);
    const stream = fn(md, {}, (err, res) => {
      settled = true;
      opts.metrics?.rpcClientDuration.observe({ method: label, code: err ? statusName(err.code) : 'OK' }, Number(process.hrtime.bigint() - started) / 1e9);
      if (err) rejectRes(fail(mapError(err)));
      else resolveRes(res);
    });
    stream.on('error', () => {
      // Reported through the callback.
    });
    /** Waits with `wait`; when nothing happens for idleMs the call is cancelled and the wait rejects. */
    const bounded = <T>(what: string, wait: (done: (v: T) => void, reject: (e: unknown) => void) => () => void) =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanup();
          const err = fail(AppError.unavailable(`${opts.name} made no progress for ${idleMs} ms (${what})`));
          stream.cancel();
          reject(err);
        }, idleMs);
        const cleanup = wait(
          (v) => {
            clearTimeout(timer);
            resolve(v);
          },
          (e) => {
            clearTimeout(timer);
            reject(e);
          },
        );
      });
    return {
      write(message) {
        if (failure) return Promise.reject(failure);
        if (settled) return response.then(() => Promise.reject(AppError.unavailable(`${opts.name} answered before the stream ended`)));
        if (stream.write(message)) return Promise.resolve();
        return bounded<void>('write', (done, reject) => {
          const onDrain = () => done();
          stream.once('drain', onDrain);
          // The call failing while the write waits ends the wait.
          response.then(
            () => reject(AppError.unavailable(`${opts.name} answered before the stream ended`)),
            (e: unknown) => reject(e),
          );
          return () => stream.off('drain', onDrain);
        });
      },
      end() {
        if (failure) return Promise.reject(failure);
        stream.end();
        return bounded<unknown>('answer', (done, reject) => {
          response.then(done, reject);
          return () => {};
        });
      },
      cancel() {
        fail(AppError.unavailable(`${opts.name} call cancelled`));
        stream.cancel();
      },
    };
  }

  function serverStream(method: string, request: unknown, ctx: CallContext, sOpts: StreamOpts = {}) {
    const { def, label } = pathOf(method);
    const idleMs = sOpts.idleMs ?? streamIdle;
    const md = toMetadata(ctx);
    const bytes = def.requestSerialize(request);
    auth.sign(md, def.path, bytes);
    const started = process.hrtime.bigint();
    const stream = raw.makeServerStreamRequest(def.path, asIs, def.responseDeserialize, bytes, md, {});
    let code = 'OK';
    stream.on('status', (s: { code: status }) => {
      code = statusName(s.code);
    });
    async function* messages(): AsyncGenerator<unknown> {
      const it = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      try {
        for (;;) {
          let timer: NodeJS.Timeout | undefined;
          const idle = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              stream.cancel();
              reject(AppError.unavailable(`${opts.name} sent nothing for ${idleMs} ms`));
            }, idleMs);
          });
          let next: IteratorResult<unknown>;
          try {
            next = await Promise.race([it.next(), idle]);
          } catch (err) {
            code = err instanceof AppError ? 'DEADLINE_EXCEEDED' : statusName((err as ServiceError).code ?? status.UNKNOWN);
            throw err instanceof AppError ? err : mapError(err as ServiceError);
          } finally {
            clearTimeout(timer);
          }
          if (next.done) return;
          yield next.value;
        }
      } finally {
        opts.metrics?.rpcClientDuration.observe({ method: label, code }, Number(process.hrtime.bigint() - started) / 1e9);
        // Leaving early (a consumer that stops reading) ends the call.
        stream.cancel();
      }
    }
    return Object.assign(messages(), { cancel: () => stream.cancel() });
  }

  return {
    raw,
    call: call as PromiseClient<C>,
    clientStream: clientStream as GrpcClient<C>['clientStream'],
    serverStream: serverStream as unknown as GrpcClient<C>['serverStream'],
    close: () => raw.close(),
  };
}
