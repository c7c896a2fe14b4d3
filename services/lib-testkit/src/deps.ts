/**
 * Finds or starts what the services depend on, in the order the README promises:
 * PostgreSQL (DATABASE_URL → local server on 5432 → embedded), NATS (NATS_URL → local
 * server on 4222 → a nats-server child) and S3 (S3_ENDPOINT → the in-process stand-in).
 * Every decision is logged as one line.
 */
import pg from 'pg';
import { withDatabase } from './database.js';
import { natsAnswers } from './nats.js';
import { startNatsServer } from './nats.server.js';
import { startEmbeddedPostgres } from './postgres.embedded.js';
import { DEFAULT_S3_BUCKET, S3_STANDIN_REGION, startS3StandIn } from './s3.standin.js';

export const LOCAL_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432';
export const LOCAL_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_DATABASE = 'reelbase';

/** Where the services find object storage. */
export interface S3Settings {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  bucket: string;
  region: string;
}

export interface DependencyOptions {
  /** Root of local state (`pg/`, `nats/`, `s3/` below it). */
  dataDir: string;
  /** Use this database as is (DATABASE_URL). */
  databaseUrl?: string;
  /** Use this NATS server as is (NATS_URL). */
  natsUrl?: string;
  /** Use this object store as is (S3_ENDPOINT and friends); otherwise the stand-in runs. */
  s3?: S3Settings;
  /** Port of the S3 stand-in; 0 (default) picks a free one. */
  s3Port?: number;
  /** Database created on a found or embedded server (default `reelbase`). */
  database?: string;
  /** Probed before starting anything; override to test the fall-backs. */
  localPostgresUrl?: string;
  localNatsUrl?: string;
  /** Skip the local servers: start the embedded PostgreSQL and a nats-server child (unless URLs are given). */
  embedded?: boolean;
  log?: (line: string) => void;
}

/** What the services are pointed at, and how to stop whatever was started for them. */
export interface Dependencies {
  databaseUrl: string;
  natsUrl: string;
  s3: S3Settings;
  /** Which of them this process started (the others were found). */
  started: { postgres: boolean; nats: boolean; s3: boolean };
  stop(): Promise<void>;
}

/** Hides the password of a URL for log lines. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/** What a connection attempt to a PostgreSQL server found. */
export type PostgresProbe =
  | { state: 'ok' }
  /** Nothing listens there (or it did not answer in time). */
  | { state: 'absent'; detail: string }
  /** A server answered but refused the connection (login, missing role or database, …). */
  | { state: 'refused'; detail: string };

/** Connects to `url` and runs `select 1`, telling "no server" from "a server that said no". */
export async function probePostgres(url: string, timeoutMs = 1500): Promise<PostgresProbe> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('select 1');
    return { state: 'ok' };
  } catch (err) {
    const e = err as Error & { code?: string };
    // SQLSTATEs are five characters; socket errors carry errno names (ECONNREFUSED, …).
    const fromServer = typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
    return { state: fromServer ? 'refused' : 'absent', detail: fromServer ? `${e.message} (SQLSTATE ${e.code})` : e.message || String(e.code ?? err) };
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Creates `database` on the server of `adminUrl` unless it exists. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: withDatabase(adminUrl, 'postgres'), connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    const r = await c.query('select 1 from pg_database where datname = $1', [database]);
    if (r.rowCount) return false;
    await c.query(`create database "${database.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await c.end();
  }
}

/** Resolves PostgreSQL, NATS and S3; on failure stops whatever it had started and rethrows. */
export async function resolveDependencies(opts: DependencyOptions): Promise<Dependencies> {
  const log = opts.log ?? ((line: string) => process.stdout.write(`[stack] ${line}\n`));
  const database = opts.database ?? DEFAULT_DATABASE;
  const stops: Array<() => Promise<void>> = [];
  const started = { postgres: false, nats: false, s3: false };
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    let databaseUrl: string;
    const localPg = opts.localPostgresUrl ?? LOCAL_POSTGRES_URL;
    if (opts.databaseUrl) {
      databaseUrl = opts.databaseUrl;
      log(`postgres: using DATABASE_URL ${safeUrl(databaseUrl)}`);
    } else {
      const probe: PostgresProbe = opts.embedded
        ? { state: 'absent', detail: 'not asked (STACK_EMBEDDED=1)' }
        : await probePostgres(withDatabase(localPg, 'postgres'));
      if (probe.state === 'ok') {
        const created = await ensureDatabase(localPg, database);
        databaseUrl = withDatabase(localPg, database);
        log(`postgres: found the local server at ${safeUrl(localPg)}; database ${database} ${created ? 'created' : 'exists'}`);
      } else {
        const found =
          probe.state === 'refused'
            ? `the server at ${safeUrl(localPg)} refused the connection: ${probe.detail}; set DATABASE_URL (with a password) to use it`
            : opts.embedded
              ? 'STACK_EMBEDDED=1'
              : `no server at ${safeUrl(localPg)}`;
        if (probe.state === 'refused') log(`postgres: ${found}; starting an embedded one instead`);
        const emb = await startEmbeddedPostgres(opts.dataDir, log);
        stops.push(emb.stop);
        started.postgres = true;
        const created = await ensureDatabase(emb.adminUrl, database);
        databaseUrl = withDatabase(emb.adminUrl, database);
        log(`postgres: ${found}; started an embedded one on port ${emb.port} (${emb.directory}); database ${database} ${created ? 'created' : 'exists'}`);
      }
    }

    let natsUrl: string;
    const localNats = opts.localNatsUrl ?? LOCAL_NATS_URL;
    if (opts.natsUrl) {
      natsUrl = opts.natsUrl;
      log(`nats: using NATS_URL ${safeUrl(natsUrl)}`);
    } else if (!opts.embedded && (await natsAnswers(localNats))) {
      natsUrl = localNats;
      log(`nats: found the local server at ${localNats}`);
    } else {
      const nats = await startNatsServer(opts.dataDir, log);
      stops.push(nats.stop);
      started.nats = true;
      natsUrl = nats.url;
      log(`nats: ${opts.embedded ? 'STACK_EMBEDDED=1' : `no server at ${localNats}`}; started nats-server -js on ${nats.url} (store ${opts.dataDir}/nats)`);
    }

    let s3: S3Settings;
    if (opts.s3) {
      s3 = opts.s3;
      log(`s3: using S3_ENDPOINT ${opts.s3.endpoint} bucket ${opts.s3.bucket}`);
    } else {
      const standIn = await startS3StandIn({ dataDir: opts.dataDir, port: opts.s3Port ?? 0 });
      stops.push(standIn.stop);
      started.s3 = true;
      s3 = { endpoint: standIn.endpoint, accessKey: standIn.accessKey, secretKey: standIn.secretKey, bucket: standIn.bucket, region: standIn.region };
      log(`s3: started the local S3 stand-in on ${standIn.endpoint} (bucket ${standIn.bucket}, files in ${standIn.directory})`);
    }
    return { databaseUrl, natsUrl, s3, started, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** S3 settings from S3_ENDPOINT / S3_ACCESS_KEY / S3_SECRET_KEY / S3_BUCKET / S3_REGION, or undefined. */
export function s3FromEnv(env: NodeJS.ProcessEnv): S3Settings | undefined {
  if (!env.S3_ENDPOINT) return undefined;
  const missing = ['S3_ACCESS_KEY', 'S3_SECRET_KEY'].filter((k) => !env[k]);
  if (missing.length) throw new Error(`S3_ENDPOINT is set but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not`);
  return {
    endpoint: env.S3_ENDPOINT,
    accessKey: env.S3_ACCESS_KEY!,
    secretKey: env.S3_SECRET_KEY!,
    bucket: env.S3_BUCKET || DEFAULT_S3_BUCKET,
    region: env.S3_REGION || S3_STANDIN_REGION,
  };
}
