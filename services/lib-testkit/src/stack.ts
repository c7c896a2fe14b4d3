/**
 * The whole reelbase stack on one machine: dependencies found or started (deps.ts), then each
 * built service as its own supervised Node process, stage by stage, each waited for on
 * /readyz. Used by `npm start` (stack.cli.ts), the end-to-end tests and the benchmarks.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeSecretsKey } from '@reelbase/lib-platform';
import { resolveDependencies, type S3Settings } from './deps.js';
import { ensureFfmpeg } from './ffmpeg.js';
import { freePorts, portIsFree } from './ports.js';
import { expandReplicas, mainPathOf, SERVICES, serviceEnv, type ServicePorts, type ServiceSpec } from './service.catalog.js';
import { ServiceProcess } from './service.process.js';

/** The repository root (this file lives in services/lib-testkit/{src,dist}). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

export interface StackOptions {
  /** Repository root holding services/<name>/dist/main.js; default REPO_ROOT. */
  root?: string;
  /** Local state (embedded PostgreSQL, nats-server store, S3 files); default `<root>/.data`. */
  dataDir?: string;
  /** Explicit dependencies; anything missing is found or started (see deps.ts). */
  databaseUrl?: string;
  natsUrl?: string;
  s3?: S3Settings;
  /** Ignore servers on 5432/4222: start the embedded PostgreSQL and a nats-server child. */
  embedded?: boolean;
  /** Prefix of every NATS stream, subject and durable (default empty). */
  natsPrefix?: string;
  /**
   * The gateway's API port is a free one too (unless gatewayPort is set). Every internal port
   * (gRPC and ops ports of every service) is always a free one.
   */
  freePorts?: boolean;
  /** Gateway port (default 8080, or free with freePorts or 0); checked to be free before anything starts. */
  gatewayPort?: number;
  /** Interface the services' gRPC and ops ports listen on (BIND_HOST); default 127.0.0.1. */
  bindHost?: string;
  /** Shared key of the signed internal calls (INTERNAL_AUTH_SECRET); default a random one per stack. */
  internalAuthSecret?: string;
  /**
   * SECRETS_KEY (secrets at rest in auth, notifier and schema). Default: `SECRETS_KEY` of `env` or the
   * process, else the one kept in `<dataDir>/secrets.key` (made once, mode 0600), so what was
   * encrypted stays readable across restarts of the same data directory.
   */
  secretsKey?: string;
  /** Aborting it stops a start in progress: what was started is stopped and startStack rejects. */
  signal?: AbortSignal;
  /** Write each service's output to `<logDir>/<name>.log` instead of prefixed stdout lines. */
  logDir?: string;
  logLevel?: string;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /** Where each service's `passEnv` variables are read from (default process.env). */
  parentEnv?: Record<string, string | undefined>;
  /** Extra environment per service, e.g. `{ auth: { PASSWORD_SCRYPT_COST: '1024' } }`. */
  serviceEnv?: Record<string, Record<string, string>>;
  /** Which services to run (default SERVICES); those without dist/main.js are skipped. */
  services?: readonly ServiceSpec[];
  /**
   * Processes of each replicated role, by its variable (`{ TRANSCODE_WORKERS: 2 }`); default
   * from `env`, then the process environment, else 1.
   */
  replicas?: Record<string, number>;
  readyTimeoutMs?: number;
  /** One line per stack step; default `[stack] …` on stdout. */
  log?: (line: string) => void;
}

/** A running stack. */
export interface Stack {
  /** Gateway base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  ports: Record<string, ServicePorts>;
  databaseUrl: string;
  natsUrl: string;
  natsPrefix: string;
  s3: S3Settings;
  /** The INTERNAL_AUTH_SECRET every service of this stack was given. */
  internalAuthSecret: string;
  /** The SECRETS_KEY every service of this stack was given. */
  secretsKey: string;
  /** Names of the services running (those built). */
  services: string[];
  /** Resolves (never rejects) when a service was given up on and the stack stopped itself. */
  fatal: Promise<Error>;
  /** Sends a signal as an expected stop: the service stays down until restart(). */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  /** Stops the service gracefully and starts it with `extraEnv` (replacing an earlier one); waits until ready. */
  restart(name: string, extraEnv?: Record<string, string>): Promise<void>;
  waitReady(name: string, timeoutMs?: number): Promise<void>;
  /** Process id of a service, undefined while it is down (crashed, killed or restarting). */
  pid(name: string): number | undefined;
  /** Log file of a service when logDir is set. */
  logFile(name: string): string | undefined;
  /** SIGTERM to every service (gateway first), SIGKILL after the timeout, then the started dependencies. */
  stop(): Promise<void>;
}

/** Variables a service may need from the parent environment; everything else it gets from the stack. */
const INHERITED = ['PATH', 'NODE_OPTIONS', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'NODE_EXTRA_CA_CERTS', 'FFMPEG_PATH', 'FFPROBE_PATH'];

/**
 * Ports of every service. Internal ones (gRPC, ops) are always free ones, so a port taken on
 * this machine (9100 is node_exporter's) never stops the stack; only the gateway's API port
 * is fixed, and it is checked before anything starts.
 */
async function assignPorts(services: ServiceSpec[], opts: StackOptions): Promise<Record<string, ServicePorts>> {
  const isGateway = (s: ServiceSpec) => s.httpPortEnv === 'GATEWAY_PORT';
  // The API port: as given, else a free one (freePorts or 0), else the catalog's default (8080).
  const pickGateway = !opts.gatewayPort && (opts.freePorts || opts.gatewayPort === 0);
  // One port per gRPC server, one ops port each, one more for a picked API port; and one spare,
  // so a fixed API port that happens to be picked too can be left out.
  const need = services.reduce((n, s) => n + (s.grpcPort !== undefined ? 1 : 0) + 1 + (isGateway(s) && pickGateway ? 1 : 0), 1);
  const gateway = services.find(isGateway);
  const fixed = gateway && !pickGateway ? opts.gatewayPort || gateway.httpPort : undefined;
  if (fixed !== undefined && !(await portIsFree(fixed))) {
    throw new Error(`port ${fixed} (GATEWAY_PORT) is already in use on this machine; stop what listens there or set GATEWAY_PORT to a free port`);
  }
  const pool = (await freePorts(need)).filter((p) => p !== fixed);
  const ports: Record<string, ServicePorts> = {};
  for (const s of services) {
    const grpc = s.grpcPort === undefined ? {} : { grpc: pool.shift()! };
    if (!isGateway(s)) ports[s.name] = { ...grpc, http: pool.shift()! };
    else ports[s.name] = { ...grpc, http: fixed ?? pool.shift()!, ops: pool.shift()! };
  }
  return ports;
}

/**
 * The SECRETS_KEY kept in `<dataDir>/secrets.key`: made on the first start (32 random bytes,
 * base64, readable by the owner only) and read on every later one, because rows encrypted with
 * it must stay readable after a restart (docs/operations.md, "The secrets key").
 */
export function keptSecretsKey(dataDir: string, log: (line: string) => void = () => {}): string {
  const file = join(dataDir, 'secrets.key');
  mkdirSync(dataDir, { recursive: true });
  if (!existsSync(file)) {
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
      log(`made a new SECRETS_KEY in ${file}; keep it with the data (encrypted secrets cannot be read without it)`);
    } catch (err) {
      // Another start made it at the same moment: read theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  chmodSync(file, 0o600);
  const key = readFileSync(file, 'utf8').trim();
  if (!decodeSecretsKey(key))
    throw new Error(`${file} does not hold a SECRETS_KEY (32 bytes in base64); restore it, or remove it together with the data it encrypted`);
  return key;
}

/** Starts dependencies and services; rejects (with everything stopped again) when any service is not ready. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`[stack] ${line}\n`));
  const root = opts.root ?? REPO_ROOT;
  const dataDir = resolve(opts.dataDir ?? join(root, '.data'));
  const replicas = (name: string) => opts.replicas?.[name] ?? Number(opts.env?.[name] ?? process.env[name] ?? 1);
  const wanted = expandReplicas(opts.services ?? SERVICES, replicas).sort((a, b) => a.stage - b.stage);
  const mainOf = (s: ServiceSpec) => mainPathOf(root, s);
  const specs = wanted.filter((s) => {
    if (existsSync(mainOf(s))) return true;
    log(`WARNING: ${s.name} is not built (${mainOf(s)} is missing); starting without it`);
    return false;
  });
  if (!specs.length) throw new Error(`no service is built under ${join(root, 'services')}; run \`tsc -b\` first`);
  // Found on PATH (or FFMPEG_PATH/FFPROBE_PATH), else installed from Debian's packages as root.
  const ffmpeg = specs.some((s) => s.ffmpeg) ? ensureFfmpeg({ ...process.env, ...opts.env }, log) : undefined;

  const aborted = () => {
    if (opts.signal?.aborted) throw new Error('the start was cancelled');
  };
  // Read (or made) before anything starts, so a damaged key file stops nothing half-way.
  const secretsKey = opts.secretsKey ?? opts.env?.SECRETS_KEY ?? (process.env.SECRETS_KEY || undefined) ?? keptSecretsKey(dataDir, log);
  const ports = await assignPorts(specs, opts);
  aborted();
  const deps = await resolveDependencies({ dataDir, databaseUrl: opts.databaseUrl, natsUrl: opts.natsUrl, s3: opts.s3, embedded: opts.embedded, log });
  if (opts.signal?.aborted) {
    await deps.stop();
    aborted();
  }
  const natsPrefix = opts.natsPrefix ?? '';
  const base: Record<string, string> = {};
  for (const k of INHERITED) if (process.env[k] !== undefined) base[k] = process.env[k]!;
  const internalAuthSecret = opts.internalAuthSecret ?? randomBytes(32).toString('base64url');
  const shared = { BIND_HOST: opts.bindHost ?? '127.0.0.1', INTERNAL_AUTH_SECRET: internalAuthSecret, SECRETS_KEY: secretsKey };

  let stopping: Promise<void> | undefined;
  let resolveFatal!: (err: Error) => void;
  const fatal = new Promise<Error>((r) => (resolveFatal = r));
  const procs = new Map<string, ServiceProcess>();
  const width = Math.max(...specs.map((s) => s.name.length));
  for (const spec of specs) {
    const env = serviceEnv(spec, {
      services: specs,
      ports,
      databaseUrl: deps.databaseUrl,
      natsUrl: deps.natsUrl,
      natsPrefix,
      logLevel: opts.logLevel ?? 'info',
      s3: deps.s3,
      parentEnv: opts.parentEnv ?? process.env,
    });
    if (spec.ffmpeg && ffmpeg) Object.assign(env, { FFMPEG_PATH: ffmpeg.ffmpeg, FFPROBE_PATH: ffmpeg.ffprobe });
    procs.set(
      spec.name,
      new ServiceProcess({
        name: spec.name,
        mainPath: mainOf(spec),
        httpPort: ports[spec.name]!.http,
        prefixWidth: width,
        logFile: opts.logDir ? join(opts.logDir, `${spec.name}.log`) : undefined,
        env: (extra) => ({ ...base, ...opts.env, ...shared, ...env, ...opts.serviceEnv?.[spec.name], ...extra }),
        onGiveUp: (name, reason) => {
          if (stopping) return;
          log(`${name} is down for good (${reason}); stopping the stack`);
          void stack.stop().then(() => resolveFatal(new Error(`${name} ${reason}`)));
        },
      }),
    );
  }
  const killAll = () => procs.forEach((p) => p.killNow());
  process.on('exit', killAll);

  const get = (name: string): ServiceProcess => {
    const p = procs.get(name);
    if (!p) throw new Error(`unknown service ${name}; running: ${[...procs.keys()].join(', ')}`);
    return p;
  };
  const readyTimeoutMs = opts.readyTimeoutMs ?? 90_000;
  const gateway = specs.find((s) => s.httpPortEnv === 'GATEWAY_PORT');

  const stack: Stack = {
    url: `http://127.0.0.1:${gateway ? ports[gateway.name]!.http : 0}`,
    ports,
    databaseUrl: deps.databaseUrl,
    natsUrl: deps.natsUrl,
    natsPrefix,
    s3: deps.s3,
    internalAuthSecret,
    secretsKey,
    services: specs.map((s) => s.name),
    fatal,
    kill: (name, signal = 'SIGKILL') => get(name).kill(signal),
    restart: (name, extraEnv) => get(name).restart(extraEnv, readyTimeoutMs),
    waitReady: (name, timeoutMs = readyTimeoutMs) => get(name).waitReady(timeoutMs, opts.signal),
    pid: (name) => get(name).pid,
    logFile: (name) => (opts.logDir ? join(opts.logDir, `${name}.log`) : undefined),
    stop() {
      stopping ??= (async () => {
        const stages = [...new Set(specs.map((s) => s.stage))].sort((a, b) => b - a);
        for (const stage of stages) {
          await Promise.all(specs.filter((s) => s.stage === stage).map((s) => get(s.name).stop()));
        }
        procs.forEach((p) => p.close());
        process.off('exit', killAll);
        await deps.stop();
      })();
      return stopping;
    },
  };

  try {
    for (const stage of [...new Set(specs.map((s) => s.stage))]) {
      const group = specs.filter((s) => s.stage === stage);
      aborted();
      for (const s of group) {
        const p = ports[s.name]!;
        const listens = [
          p.grpc !== undefined ? `gRPC :${p.grpc}` : '',
          `${s.httpPortEnv === 'GATEWAY_PORT' ? 'HTTP' : 'ops'} :${p.http}`,
          p.ops !== undefined ? `ops :${p.ops}` : '',
        ];
        log(`starting ${s.name} (${listens.filter(Boolean).join(', ')})`);
        get(s.name).start();
      }
      // Every start of the stage settles before a failure is reported, and a service that gave up
      // is named over the others, which the stack then stops on purpose (they are "not running").
      const settled = await Promise.allSettled(
        group.map(async (s) => {
          await get(s.name).waitReady(readyTimeoutMs, opts.signal);
          log(`${s.name} is ready`);
        }),
      );
      const failed = group.flatMap((s, i) => {
        const r = settled[i]!;
        return r.status === 'rejected' ? [{ gaveUp: get(s.name).gaveUp !== null, reason: r.reason as unknown }] : [];
      });
      if (failed.length > 0) throw (failed.find((f) => f.gaveUp) ?? failed[0]!).reason;
    }
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return stack;
}
