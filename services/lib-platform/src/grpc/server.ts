/**
 * gRPC server helpers: handlers are plain `async (request, ctx) => response` functions
 * (streaming methods: see {@link ClientStreamHandler} and {@link ServerStreamHandler});
 * the wrapper refuses calls without a valid internal assertion (internal.auth.ts: the caller, the
 * method, a digest of the request message as it arrived, a nonce this process has not seen) with
 * UNAUTHENTICATED, decodes the call context, records RED metrics, logs failures and maps
 * errors to statuses in one place (status.ts). Only grpc.health.v1 answers unsigned calls.
 */
import {
  Server,
  ServerCredentials,
  status,
  type handleClientStreamingCall,
  type handleServerStreamingCall,
  type handleUnaryCall,
  type Metadata,
  type ServerReadableStream,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { healthv1 } from '@reelbase/proto';
import { fromMetadata, type CallContext } from '../context.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { HealthService } from './health.js';
import { INTERNAL_AUTH_KEY, INTERNAL_AUTH_REFUSED, InternalAuth, requestDigest, STREAM_BODY } from './internal.auth.js';
import { KIND_TO_STATUS, statusName, toServiceError } from './status.js';

/** The promise-returning form of a ts-proto `...Server` interface (unary methods only). */
export type UnaryHandlers<S> = {
  [K in keyof S as S[K] extends handleUnaryCall<any, any> ? K : never]: S[K] extends handleUnaryCall<infer Req, infer Res>
    ? (request: Req, ctx: CallContext) => Promise<Res>
    : never;
};

/**
 * A client-streaming method: reads the request messages in order (back-pressure is the
 * iteration: the next message is pulled only when the handler asks for it) and answers once.
 * `signal` aborts when the caller cancels or goes quiet for longer than the stream idle limit.
 */
export type ClientStreamHandler<Req, Res> = (requests: AsyncIterable<Req>, ctx: CallContext, signal: AbortSignal) => Promise<Res>;

/** Where a server-streaming handler writes its answer messages. */
export interface StreamWriter<Res> {
  /** Sends one message; resolves when the transport can take more (back-pressure). */
  write(message: Res): Promise<void>;
  /** Aborted when the caller cancels or disconnects. */
  readonly signal: AbortSignal;
}

/** A server-streaming method: writes its messages, resolves when done (the stream then ends OK). */
export type ServerStreamHandler<Req, Res> = (request: Req, ctx: CallContext, out: StreamWriter<Res>) => Promise<void>;

/** The handler form of every method of a ts-proto `...Server` interface, streaming ones included. */
export type ServiceHandlers<S> = {
  [
    K in keyof S as S[K] extends handleUnaryCall<any, any> | handleClientStreamingCall<any, any> | handleServerStreamingCall<any, any> ? K : never
  ]: S[K] extends handleClientStreamingCall<infer Req, infer Res>
    ? ClientStreamHandler<Req, Res>
    : S[K] extends handleServerStreamingCall<infer Req, infer Res>
      ? ServerStreamHandler<Req, Res>
      : S[K] extends handleUnaryCall<infer Req, infer Res>
        ? (request: Req, ctx: CallContext) => Promise<Res>
        : never;
};

/** Default {@link GrpcServerOptions.streamIdleMs}. */
export const DEFAULT_STREAM_IDLE_MS = 60_000;

export interface GrpcServerOptions {
  logger: Logger;
  metrics: Metrics;
  /** INTERNAL_AUTH_SECRET: calls must be signed with it (at least 32 bytes). */
  internalAuthSecret: string;
  /**
   * A client stream that sends nothing for this long is cut off (`unavailable`): a long upload is
   * bounded by its pauses, not by its total duration.
   */
  streamIdleMs?: number;
}

/** A grpc-js server with health, metrics and error mapping built in. */
export class GrpcServer {
  readonly server = new Server({
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    // Channelz keeps per-call bookkeeping nobody reads here; Prometheus metrics cover it.
    'grpc.enable_channelz': 0,
  });
  readonly health = new HealthService();
  private port = 0;
  private readonly auth: InternalAuth;
  /** Digest of the bytes each decoded request arrived as (a request message, until it is collected). */
  private readonly digests = new WeakMap<object, string>();

  constructor(private readonly opts: GrpcServerOptions) {
    this.auth = new InternalAuth(opts.internalAuthSecret);
    this.server.addService(healthv1.HealthService, this.opts_health());
  }

  private opts_health(): UntypedServiceImplementation {
    return this.health.implementation as unknown as UntypedServiceImplementation;
  }

  /**
   * Registers a service. `name` is its full proto name (for health checks); `handlers`
   * implements every unary method of `definition`.
   */
  add<S>(name: string, definition: ServiceDefinition<any>, handlers: ServiceHandlers<S> | UnaryHandlers<S>): this {
    const impl: UntypedServiceImplementation = {};
    const served: Record<string, ServiceDefinition<any>[string]> = {};
    for (const [method, def] of Object.entries(definition)) {
      // The request's digest is taken from the bytes as they arrived, while grpc-js decodes them
      // (once), for the assertion check in the handler wrapper; a client stream has none.
      served[method] = def.requestStream
        ? def
        : {
            ...def,
            requestDeserialize: (bytes: Buffer) => {
              const message = def.requestDeserialize(bytes) as object;
              this.digests.set(message, requestDigest(bytes));
              return message;
            },
          };
      const fn = (handlers as Record<string, ((...args: never[]) => Promise<unknown>) | undefined>)[method];
      if (!fn) throw new Error(`${name}: no handler for ${method}`);
      const label = `${name}/${def.originalName ?? method}`;
      if (def.requestStream && def.responseStream) throw new Error(`${name}: bidirectional ${method} is not supported`);
      else if (def.requestStream) impl[method] = this.wrapClientStream(label, def.path, fn.bind(handlers) as ClientStreamHandler<unknown, unknown>);
      else if (def.responseStream) impl[method] = this.wrapServerStream(label, def.path, fn.bind(handlers) as ServerStreamHandler<unknown, unknown>);
      else impl[method] = this.wrap(label, def.path, fn.bind(handlers) as (req: unknown, ctx: CallContext) => Promise<unknown>);
    }
    this.server.addService(served, impl);
    this.health.set(name, true);
    return this;
  }

  /**
   * Metrics for one call, the assertion check and the failure log, shared by every call shape.
   * `request` is the decoded request message, or {@link STREAM_BODY} for a client stream.
   */
  private begin(label: string, path: string, metadata: Metadata, peer: () => string, request: unknown) {
    const { logger, metrics } = this.opts;
    const started = process.hrtime.bigint();
    const done = (code: status) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const labels = { method: label, code: statusName(code) };
      metrics.rpcRequests.inc(labels);
      metrics.rpcDuration.observe(labels, seconds);
    };
    const digest = request === STREAM_BODY ? STREAM_BODY : typeof request === 'object' && request !== null ? this.digests.get(request) : undefined;
    const refused = digest === undefined ? 'malformed' : this.auth.verify(metadata, path, digest);
    if (refused) {
      done(status.UNAUTHENTICATED);
      metrics.internalAuthFailures.inc({ reason: refused });
      logger.warn({ rpc: label, reason: refused, peer: peer() }, 'rpc refused: no valid internal assertion');
      const error = { code: status.UNAUTHENTICATED, details: `${INTERNAL_AUTH_REFUSED}: ${refused} ${INTERNAL_AUTH_KEY} assertion` };
      return { refused: error, ctx: undefined, done, fail: () => error } as const;
    }
    const ctx = fromMetadata(metadata);
    const fail = (err: unknown) => {
      const se = toServiceError(err);
      done(se.code ?? status.UNKNOWN);
      if (!(err instanceof AppError) || err.kind === 'internal') {
        logger.error({ err, rpc: label, request_id: ctx.requestId }, 'rpc failed');
      } else if (err.kind === 'unavailable') {
        logger.warn({ rpc: label, request_id: ctx.requestId, reason: err.message }, 'rpc unavailable');
      }
      return se;
    };
    return { refused: undefined, ctx, done, fail } as const;
  }

  private wrap(label: string, path: string, fn: (req: unknown, ctx: CallContext) => Promise<unknown>): handleUnaryCall<unknown, unknown> {
    return (call, callback) => {
      const c = this.begin(label, path, call.metadata, () => call.getPeer(), call.request);
      if (c.refused) {
        callback(c.refused as never, null);
        return;
      }
      fn(call.request, c.ctx).then(
        (res) => {
          c.done(status.OK);
          callback(null, res);
        },
        (err: unknown) => callback(c.fail(err) as never, null),
      );
    };
  }

  private wrapClientStream(label: string, path: string, fn: ClientStreamHandler<unknown, unknown>): handleClientStreamingCall<unknown, unknown> {
    const idleMs = this.opts.streamIdleMs ?? DEFAULT_STREAM_IDLE_MS;
    return (call, callback) => {
      const c = this.begin(label, path, call.metadata, () => call.getPeer(), STREAM_BODY);
      if (c.refused) {
        callback(c.refused as never, null);
        call.destroy();
        return;
      }
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort(AppError.unavailable('the caller cancelled the stream')));
      fn(readWithIdleLimit(call, idleMs, abort), c.ctx, abort.signal).then(
        (res) => {
          c.done(status.OK);
          callback(null, res);
        },
        (err: unknown) => {
          callback(c.fail(abort.signal.aborted && !(err instanceof AppError) ? abort.signal.reason : err) as never, null);
          // Stop reading what the caller still sends.
          call.destroy();
        },
      );
    };
  }

  private wrapServerStream(label: string, path: string, fn: ServerStreamHandler<unknown, unknown>): handleServerStreamingCall<unknown, unknown> {
    return (call: ServerWritableStream<unknown, unknown>) => {
      const c = this.begin(label, path, call.metadata, () => call.getPeer(), call.request);
      if (c.refused) {
        call.emit('error', c.refused);
        return;
      }
      const abort = new AbortController();
      call.on('cancelled', () => abort.abort(AppError.unavailable('the caller cancelled the stream')));
      const out: StreamWriter<unknown> = {
        signal: abort.signal,
        write: (message) =>
          new Promise<void>((resolve, reject) => {
            if (abort.signal.aborted) return reject(abort.signal.reason as Error);
            if (call.write(message)) return resolve();
            const onDrain = () => {
              abort.signal.removeEventListener('abort', onAbort);
              resolve();
            };
            const onAbort = () => {
              call.off('drain', onDrain);
              reject(abort.signal.reason as Error);
            };
            call.once('drain', onDrain);
            abort.signal.addEventListener('abort', onAbort, { once: true });
          }),
      };
      fn(call.request, c.ctx, out).then(
        () => {
          c.done(status.OK);
          call.end();
        },
        (err: unknown) => {
          const se = c.fail(err);
          if (!abort.signal.aborted) call.emit('error', se);
        },
      );
    };
  }

  /** Binds and starts on `host` (BIND_HOST); resolves with the bound port (useful with port 0). */
  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound))),
    );
    this.opts.logger.info({ port: this.port }, 'gRPC server listening');
    return this.port;
  }

  /** Stops accepting calls, lets in-flight calls finish (bounded), then closes. */
  async close(graceMs = 5000): Promise<void> {
    this.health.stopAll();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * The messages of a client stream as an async iterable that fails with `unavailable` when the
 * caller sends nothing for `idleMs` or cancels.
 */
async function* readWithIdleLimit<T>(call: ServerReadableStream<T, unknown>, idleMs: number, abort: AbortController): AsyncIterable<T> {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const err = AppError.unavailable(`the caller sent nothing for ${idleMs} ms`);
      abort.abort(err);
      call.destroy(err);
    }, idleMs);
    timer.unref();
  };
  arm();
  try {
    for await (const message of call as AsyncIterable<T>) {
      // Only the caller's pauses count: not the time the handler spends on a message.
      clearTimeout(timer);
      yield message;
      if (abort.signal.aborted) break;
      arm();
    }
    if (abort.signal.aborted) throw abort.signal.reason;
  } catch (err) {
    throw abort.signal.aborted ? abort.signal.reason : err;
  } finally {
    clearTimeout(timer);
  }
}

export { KIND_TO_STATUS };
