/**
 * Prometheus metrics (prom-client): process metrics plus RED metrics per HTTP route and
 * per RPC. Each service owns one registry labelled with its name.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The metrics every service exposes; add service-specific ones to `registry`. */
export class Metrics {
  readonly registry = new Registry();
  /** HTTP requests by route template, method and status. */
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** gRPC calls handled, by method and status code name. */
  readonly rpcRequests: Counter<'method' | 'code'>;
  readonly rpcDuration: Histogram<'method' | 'code'>;
  /** gRPC calls made to other services, by target method and code. */
  readonly rpcClientDuration: Histogram<'method' | 'code'>;

  constructor(readonly service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route, method and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.rpcRequests = new Counter({
      name: 'grpc_server_handled_total',
      help: 'gRPC calls handled, by method and status code',
      labelNames: ['method', 'code'],
      registers: [this.registry],
    });
    this.rpcDuration = new Histogram({
      name: 'grpc_server_handling_seconds',
      help: 'gRPC call handling time, by method and status code',
      labelNames: ['method', 'code'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.rpcClientDuration = new Histogram({
      name: 'grpc_client_handling_seconds',
      help: 'gRPC calls made to other services, by method and status code',
      labelNames: ['method', 'code'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  /** Creates and registers a gauge. */
  gauge<L extends string>(name: string, help: string, labelNames: L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** Creates and registers a counter. */
  counter<L extends string>(name: string, help: string, labelNames: L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** Creates and registers a histogram with latency buckets (or `buckets`, for longer work such as transcodes). */
  histogram<L extends string>(name: string, help: string, labelNames: L[] = [], buckets: number[] = LATENCY_BUCKETS): Histogram<L> {
    return new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }
}
