/**
 * Prometheus metrics (prom-client): process metrics plus RED metrics per HTTP route and
 * per RPC. Each service owns one registry labelled with its name.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One reading of a connection pool. */
export interface PoolSample {
  used: number;
  free: number;
  /** Callers waiting for a connection. */
  pending: number;
  max: number;
}

/** The part of a NATS connection {@link Metrics.watchNats} follows. */
export interface NatsStatusSource {
  isClosed(): boolean;
  status(): AsyncIterable<{ type: string }>;
}

/**
 * A Knex pool (tarn: the ORM's, or one of `openSqlPool`) as a {@link PoolSample}, read at each
 * call; `max` is reported as the pool's limit (default: the pool's own `max`). The one sampler
 * of a pool: the one below only says where the ORM's Knex instance is.
 */
export function knexPoolSample(knex: unknown, max?: number): () => PoolSample {
  return () => {
    const pool = (knex as { client?: { pool?: TarnPool } }).client?.pool;
    // Destroyed (the service is stopping): nothing in use.
    if (!pool) return { used: 0, free: 0, pending: 0, max: max ?? 0 };
    return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires(), max: max ?? pool.max };
  };
}

/** The pool under a MikroORM instance: {@link knexPoolSample} of its Knex. */
export function ormPoolSample(orm: { em: { getConnection(): { getKnex(): unknown } } }): () => PoolSample {
  return knexPoolSample(orm.em.getConnection().getKnex());
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

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
  /** Incoming gRPC calls refused for want of a valid internal assertion, by reason. */
  readonly internalAuthFailures: Counter<'reason'>;
  private readonly pools = new Map<string, () => PoolSample>();
  private natsConnected: Gauge | undefined;
  private readinessWatched = false;

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
    this.internalAuthFailures = new Counter({
      name: 'grpc_internal_auth_failures_total',
      help: 'Incoming gRPC calls refused for want of a valid internal assertion, by reason',
      labelNames: ['reason'],
      registers: [this.registry],
    });
    const pools = this.pools;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by pool and state (used, free, pending acquires, max)',
      labelNames: ['pool', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [pool, sample] of pools) {
          const s = sample();
          this.set({ pool, state: 'used' }, s.used);
          this.set({ pool, state: 'free' }, s.free);
          this.set({ pool, state: 'pending' }, s.pending);
          this.set({ pool, state: 'max' }, s.max);
        }
      },
    });
  }

  /** Reports a database pool as `db_pool_connections{pool}`; `sample` is read at every scrape. */
  watchPool(pool: string, sample: () => PoolSample): void {
    this.pools.set(pool, sample);
  }

  /**
   * Reports a NATS connection as `nats_connected` (1 connected, 0 disconnected or closed),
   * following its status changes.
   */
  watchNats(nc: NatsStatusSource): void {
    const gauge = (this.natsConnected ??= this.gauge('nats_connected', '1 while the NATS connection is up, 0 while it is disconnected or closed'));
    gauge.set(nc.isClosed() ? 0 : 1);
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect' || s.type === 'close') gauge.set(0);
        else if (s.type === 'reconnect') gauge.set(1);
      }
      gauge.set(0);
    })().catch(() => gauge.set(0));
  }

  /**
   * Reports readiness as `readiness_check_up{check}` (1 answering, 0 not) and `service_ready`,
   * running the checks at every scrape.
   */
  watchReadiness(readiness: { run(): Promise<{ ready: boolean; checks: Record<string, string> }> }): void {
    if (this.readinessWatched) return;
    this.readinessWatched = true;
    const checks = new Gauge({
      name: 'readiness_check_up',
      help: '1 while the named readiness check answers',
      labelNames: ['check'],
      registers: [this.registry],
    });
    new Gauge({
      name: 'service_ready',
      help: '1 while every readiness check answers (what /readyz reports)',
      registers: [this.registry],
      async collect() {
        const r = await readiness.run();
        checks.reset();
        for (const [name, v] of Object.entries(r.checks)) checks.set({ check: name }, v === 'ok' ? 1 : 0);
        this.set(r.ready ? 1 : 0);
      },
    });
  }

  /** Creates and registers a gauge. */
  gauge<L extends string>(name: string, help: string, labelNames: L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] });
  }

  /** Creates and registers a gauge whose value `collect` sets at every scrape (it may be async). */
  collectedGauge<L extends string>(name: string, help: string, labelNames: L[], collect: (gauge: Gauge<L>) => void | Promise<void>): Gauge<L> {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        return collect(this);
      },
    });
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
