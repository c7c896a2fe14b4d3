/**
 * gRPC server helpers: handlers are plain `async (request, ctx) => response` functions;
 * the wrapper refuses calls without a valid internal assertion (internal.auth.ts) with
 * UNAUTHENTICATED, decodes the call context, records RED metrics, logs failures and maps
 * errors to statuses in one place (status.ts). Only grpc.health.v1 answers unsigned calls.
 */
import { Server, ServerCredentials, status, type handleUnaryCall, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { healthv1 } from '@reelbase/proto';
import { fromMetadata, type CallContext } from '../context.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { HealthService } from './health.js';
import { INTERNAL_AUTH_KEY, INTERNAL_AUTH_REFUSED, InternalAuth } from './internal.auth.js';
import { KIND_TO_STATUS, statusName, toServiceError } from './status.js';

/** The promise-returning form of a ts-proto `...Server` interface (unary methods only). */
export type UnaryHandlers<S> = {
  [K in keyof S as S[K] extends handleUnaryCall<any, any> ? K : never]: S[K] extends handleUnaryCall<infer Req, infer Res>
    ? (request: Req, ctx: CallContext) => Promise<Res>
    : never;
};

export interface GrpcServerOptions {
  logger: Logger;
  metrics: Metrics;
  /** INTERNAL_AUTH_SECRET: calls must be signed with it (at least 32 bytes). */
  internalAuthSecret: string;
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
  add<S>(name: string, definition: ServiceDefinition<any>, handlers: UnaryHandlers<S>): this {
    const impl: UntypedServiceImplementation = {};
    for (const [method, def] of Object.entries(definition)) {
      const fn = (handlers as Record<string, (req: unknown, ctx: CallContext) => Promise<unknown>>)[method];
      if (def.requestStream || def.responseStream) continue;
      if (!fn) throw new Error(`${name}: no handler for ${method}`);
      impl[method] = this.wrap(`${name}/${def.originalName ?? method}`, def.path, fn.bind(handlers));
    }
    this.server.addService(definition, impl);
    this.health.set(name, true);
    return this;
  }

  private wrap(label: string, path: string, fn: (req: unknown, ctx: CallContext) => Promise<unknown>): handleUnaryCall<unknown, unknown> {
    const { logger, metrics } = this.opts;
    return (call, callback) => {
      const started = process.hrtime.bigint();
      const done = (code: status) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const labels = { method: label, code: statusName(code) };
        metrics.rpcRequests.inc(labels);
        metrics.rpcDuration.observe(labels, seconds);
      };
      const refused = this.auth.verify(call.metadata, path);
      if (refused) {
        done(status.UNAUTHENTICATED);
        logger.warn({ rpc: label, reason: refused, peer: call.getPeer() }, 'rpc refused: no valid internal assertion');
        callback({ code: status.UNAUTHENTICATED, details: `${INTERNAL_AUTH_REFUSED}: ${refused} ${INTERNAL_AUTH_KEY} assertion` } as never, null);
        return;
      }
      const ctx = fromMetadata(call.metadata);
      fn(call.request, ctx).then(
        (res) => {
          done(status.OK);
          callback(null, res);
        },
        (err: unknown) => {
          const se = toServiceError(err);
          done(se.code ?? status.UNKNOWN);
          if (!(err instanceof AppError) || err.kind === 'internal') {
            logger.error({ err, rpc: label, request_id: ctx.requestId }, 'rpc failed');
          } else if (err.kind === 'unavailable') {
            logger.warn({ rpc: label, request_id: ctx.requestId, reason: err.message }, 'rpc unavailable');
          }
          callback(se as never, null);
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

export { KIND_TO_STATUS };
