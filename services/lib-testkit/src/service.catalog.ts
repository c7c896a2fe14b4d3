/**
 * The services the local stack runs, as data: default ports (docs/architecture.md), the
 * environment variable each port travels in, start stage and what each one needs. Adding a
 * service (notifier) is one entry here; its `dist/main.js` (or `main`) is started when it
 * exists and skipped with a warning when it does not.
 */
import type { S3Settings } from './deps.js';

export interface ServiceSpec {
  /** Folder under services/ and the name used in logs and the Stack API. */
  name: string;
  /** Default gRPC port (GRPC_PORT); absent for the gateway. */
  grpcPort?: number;
  /** Default HTTP port: the ops server (HTTP_PORT) or, for the gateway, the API (GATEWAY_PORT). */
  httpPort: number;
  httpPortEnv: 'HTTP_PORT' | 'GATEWAY_PORT';
  /**
   * Default ops port (HTTP_PORT) of a service whose httpPort is its API (the gateway), as
   * deployments use it. The local stack gives it a free port instead (ServicePorts.ops).
   */
  opsPort?: number;
  /** Services of one stage start together; the next stage waits until they are all ready. */
  stage: number;
  /** Gets DATABASE_URL. */
  database: boolean;
  /** Gets S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET, S3_REGION. */
  objectStore?: boolean;
  /** Folder under services/ when it differs from `name` (a second role of one package). */
  folder?: string;
  /** Entry point under `dist/` (default `main.js`). */
  main?: string;
  /**
   * Variable naming how many processes of this role run (e.g. TRANSCODE_WORKERS, default 1):
   * the first is called `name`, the next `name-2`, `name-3`, ...
   */
  replicasEnv?: string;
  /** Needs ffmpeg and ffprobe: found (or installed) before it starts, FFMPEG_PATH/FFPROBE_PATH passed on. */
  ffmpeg?: boolean;
  /**
   * Variables handed on from the environment of the process that starts the stack (a test, a
   * benchmark: `parentEnv`), when set there: settings one may want to change without code (the
   * notifier's retry schedule). `npm start` hands on every variable it was given anyway.
   */
  passEnv?: readonly string[];
}

/** Every service `npm start` knows, in start order. */
export const SERVICES: readonly ServiceSpec[] = [
  { name: 'auth', grpcPort: 50051, httpPort: 9101, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
  { name: 'records', grpcPort: 50052, httpPort: 9102, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
  { name: 'events', grpcPort: 50053, httpPort: 9103, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
  // Ready once records holds its snapshot (it retries until records answers).
  { name: 'schema', grpcPort: 50054, httpPort: 9104, httpPortEnv: 'HTTP_PORT', stage: 1, database: true },
  // The media api: uploads, reviewable status and media reads (docs/media.md).
  { name: 'media-transcode', grpcPort: 50055, httpPort: 9105, httpPortEnv: 'HTTP_PORT', stage: 1, database: true, objectStore: true },
  // Its transcode workers: pull consumers of TRANSCODE, as many as TRANSCODE_WORKERS (1).
  {
    name: 'media-worker',
    folder: 'media-transcode',
    main: 'worker.main.js',
    httpPort: 9106,
    httpPortEnv: 'HTTP_PORT',
    stage: 2,
    database: true,
    objectStore: true,
    replicasEnv: 'TRANSCODE_WORKERS',
    ffmpeg: true,
  },
  { name: 'gateway', httpPort: 8080, opsPort: 9100, httpPortEnv: 'GATEWAY_PORT', stage: 2, database: false },
  // Follows the event log (it retries until events answers; ready once PostgreSQL and NATS are), and
  // stops after the gateway. WEBHOOK_ALLOW_PRIVATE_TARGETS stays unset unless the environment sets
  // it, so `npm start` refuses loopback and private targets like production.
  {
    name: 'notifier',
    grpcPort: 50056,
    httpPort: 9107,
    httpPortEnv: 'HTTP_PORT',
    stage: 1,
    database: true,
    passEnv: ['WEBHOOK_BACKOFF_BASE_MS', 'WEBHOOK_RETRY_WINDOW_MS', 'WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY'],
  },
];

/** The entry point of a service under `root`. */
export function mainPathOf(root: string, spec: ServiceSpec): string {
  return `${root}/services/${spec.folder ?? spec.name}/dist/${spec.main ?? 'main.js'}`;
}

/**
 * The catalog with each replicated role expanded to its processes: `count(env)` of them,
 * named `name`, `name-2`, ... (a count below 1 is 1).
 */
export function expandReplicas(services: readonly ServiceSpec[], count: (env: string) => number): ServiceSpec[] {
  return services.flatMap((s) => {
    if (!s.replicasEnv) return [s];
    const n = Math.max(1, Math.floor(count(s.replicasEnv)) || 1);
    return Array.from({ length: n }, (_, i) => ({ ...s, name: i === 0 ? s.name : `${s.name}-${i + 1}` }));
  });
}

/** Ports one service listens on. */
export interface ServicePorts {
  grpc?: number;
  /** The ops port, or the API port of the gateway. */
  http: number;
  /** The gateway's ops port (HTTP_PORT). */
  ops?: number;
}

/** `media-transcode` → `MEDIA_TRANSCODE_ADDR`: how peers find a gRPC service. */
export function addrEnvName(service: string): string {
  return `${service.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_ADDR`;
}

export interface ServiceEnvContext {
  services: readonly ServiceSpec[];
  ports: Record<string, ServicePorts>;
  databaseUrl: string;
  natsUrl: string;
  natsPrefix: string;
  logLevel: string;
  s3: S3Settings;
  /** Where `passEnv` variables are read from (the stack's own process.env). */
  parentEnv?: Record<string, string | undefined>;
}

/**
 * The environment the stack gives one service: its ports, every gRPC peer's address
 * (`<NAME>_ADDR`, so new peers need no code here), NATS, the database or object store where the
 * service needs them, and its `passEnv` variables that are set in `parentEnv`.
 */
export function serviceEnv(spec: ServiceSpec, ctx: ServiceEnvContext): Record<string, string> {
  const env: Record<string, string> = {
    LOG_LEVEL: ctx.logLevel,
    NATS_URL: ctx.natsUrl,
    NATS_PREFIX: ctx.natsPrefix,
  };
  const own = ctx.ports[spec.name]!;
  env[spec.httpPortEnv] = String(own.http);
  if (own.ops !== undefined) env.HTTP_PORT = String(own.ops);
  if (own.grpc !== undefined) env.GRPC_PORT = String(own.grpc);
  for (const peer of ctx.services) {
    const grpc = ctx.ports[peer.name]?.grpc;
    if (grpc !== undefined) env[addrEnvName(peer.name)] = `127.0.0.1:${grpc}`;
  }
  if (spec.database) env.DATABASE_URL = ctx.databaseUrl;
  if (spec.objectStore) {
    env.S3_ENDPOINT = ctx.s3.endpoint;
    env.S3_ACCESS_KEY = ctx.s3.accessKey;
    env.S3_SECRET_KEY = ctx.s3.secretKey;
    env.S3_BUCKET = ctx.s3.bucket;
    env.S3_REGION = ctx.s3.region;
  }
  for (const name of spec.passEnv ?? []) {
    const value = ctx.parentEnv?.[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}
