/**
 * The bare chain: the smallest program with the gateway's shape — an HTTP process that hands each
 * request to a second process over gRPC, which runs a query's statements on PostgreSQL — and none
 * of the gateway's or records' own work: no framework, no authentication, no validation, no
 * planning (the request carries the plan the bench compiled), no metrics, no logs. What it costs
 * over the raw statements is what two Node processes and the two hops cost on this machine, so it
 * is the lower bound of the gateway's figure (bench/README.md, "Queries on 1,000,000 records").
 *
 * The same two processes carry the bare write chain (bench/README.md, "What each contender does"):
 * `POST /entities/{Type}` is handed over gRPC as the type and the body's bytes, and the gRPC process
 * runs records' own insert statement (`insertWithEventPgStatement`: the record, its outbox row and,
 * by the table's triggers, its link rows, guarded by the schema version as records writes it) on a
 * `pg` pool, and answers with the row. No authentication, no validation, no relay.
 *
 * `startBareChain` starts both processes from this same file (`--role grpc` / `--role http`); each
 * prints its port on its first line of output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { statementName } from '@reelbase/lib-platform';
import { core, kernel, migrateRecordsSchema } from '@reelbase/records';

const { insertWithEventPgStatement, SCHEMA_VERSION_SQL } = kernel;
const { runQueryPlan } = core;
type QueryPlan = core.QueryPlan;

const METHOD = '/bench.BareChain/Query';
const CREATE = '/bench.BareChain/Create';
const same = (b: Buffer): Buffer => b;
/** A unary method passing raw bytes both ways. */
const unary = (path: string): grpc.MethodDefinition<Buffer, Buffer> => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: same,
  requestDeserialize: same,
  responseSerialize: same,
  responseDeserialize: same,
});
const SERVICE: grpc.ServiceDefinition = { Query: unary(METHOD), Create: unary(CREATE) };

/** The connections records' writes use (its main pool: lib-platform db.ts). */
const WRITE_POOL_MAX = 10;

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : process.argv[i + 1];
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

type Json = Record<string, unknown>;

/**
 * One create: `type\n` + the request body in, the written row out. The event carries what a
 * create's event carries (the columns set and the data); the statement adds its `occurred_at`.
 */
async function create(pool: pg.Pool, request: Buffer, actor: string | null, schemaVersion: { v: number }): Promise<Buffer> {
  const nl = request.indexOf(10);
  const entityType = request.toString('utf8', 0, nl);
  const body = JSON.parse(request.toString('utf8', nl + 1)) as { project_id?: string; data?: Json };
  const projectId = body.project_id ?? null;
  const data = body.data ?? {};
  const id = uuidv7();
  const eventId = uuidv7();
  const payload = {
    event_id: eventId,
    entity_type: entityType,
    entity_id: id,
    project_id: projectId,
    action: 'create',
    actor,
    changes: { project_id: projectId, active: true, ...data },
  };
  const record = { id, entityType, projectId, status: null, active: true, thumbnailId: null, createdBy: actor, data };
  const event = { subject: `bench.${entityType}.create`, eventId, json: JSON.stringify(payload) };
  for (let attempt = 0; attempt < 2; attempt += 1) {
    // Prepared once per connection, as records runs it (lib-platform's queryPrepared).
    const st = insertWithEventPgStatement(record, event, { schemaVersion: schemaVersion.v, links: [] });
    const res = await pool.query({ name: statementName(st.text), ...st });
    if (res.rows[0]) return Buffer.from(JSON.stringify(res.rows[0]));
    // Nothing written: the schema version moved (or the project is not live); read it once again.
    schemaVersion.v = Number((await pool.query<{ v: string }>(`select ${SCHEMA_VERSION_SQL} as v`)).rows[0]!.v);
  }
  throw new Error(`nothing written: is ${projectId} a live Project?`);
}

/** The gRPC process: a plan in, the page's records (the JSON texts PostgreSQL wrote) out; or a create. */
async function grpcRole(): Promise<void> {
  const pool = new pg.Pool({ connectionString: arg('db'), max: Number(arg('pool', '4')) });
  const actor = arg('actor', '') || null;
  const schemaVersion = { v: Number((await pool.query<{ v: string }>(`select ${SCHEMA_VERSION_SQL} as v`)).rows[0]!.v) };
  const server = new grpc.Server();
  server.addService(SERVICE, {
    Create: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      create(pool, call.request, actor, schemaVersion).then(
        (out) => done(null, out),
        (err: Error) => done({ code: grpc.status.INTERNAL, details: err.message }),
      );
    },
    Query: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      const plan = JSON.parse(call.request.toString('utf8')) as QueryPlan;
      runQueryPlan(pool, plan).then(
        (out) => done(null, Buffer.from(`[${out.rows.map((r) => r.json).join(',')}]`)),
        (err: Error) => done({ code: grpc.status.INTERNAL, details: err.message }),
      );
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  process.stdout.write(`${port}\n`);
}

/**
 * The HTTP process: `POST /entities/{Type}` to the gRPC process's Create, its row back (201); any
 * other request body to Query, its answer back as `{"items":…}`.
 */
async function httpRole(): Promise<void> {
  const client = new grpc.Client(`127.0.0.1:${arg('grpc-port')}`, grpc.credentials.createInsecure());
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const type = req.url?.startsWith('/entities/') ? req.url.slice('/entities/'.length) : null;
    if (type !== null) chunks.push(Buffer.from(`${type}\n`));
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (type !== null) {
        client.makeUnaryRequest(CREATE, same, same, Buffer.concat(chunks), (err, out) => {
          if (err || !out) {
            res.writeHead(500).end(err?.message);
            return;
          }
          res.writeHead(201, { 'content-type': 'application/json' }).end(out);
        });
        return;
      }
      client.makeUnaryRequest(METHOD, same, same, Buffer.concat(chunks), (err, out) => {
        if (err || !out) {
          res.writeHead(500).end(err?.message);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"items":${out.toString('utf8')}}`);
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
}

function startRole(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare chain ${args[1]} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve({ child, port: Number(line) }));
  });
}

export { WRITE_POOL_MAX };

/**
 * Makes `databaseUrl` ready for the bare write chain: records' migrations (the same tables, indexes
 * and link triggers) and the Project its creates name, written with records' own statement.
 */
export async function prepareBareWriteDatabase(databaseUrl: string, projectId: string, actor: string | null): Promise<void> {
  await migrateRecordsSchema(databaseUrl);
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    const record = {
      id: projectId,
      entityType: 'Project',
      projectId: null,
      status: null,
      active: true,
      thumbnailId: null,
      createdBy: actor,
      data: { name: 'bench' },
    };
    await c.query(insertWithEventPgStatement(record, undefined));
  } finally {
    await c.end();
  }
}

export interface BareChain {
  url: string;
  /** Process ids of the HTTP and the gRPC process. */
  pids: { http: number; grpc: number };
  stop(): void;
}

/**
 * Starts the gRPC process on `databaseUrl` (a pool of `pool` connections, 4 by default; creates
 * written by `actor`), then the HTTP process in front of it.
 */
export async function startBareChain(databaseUrl: string, opts: { pool?: number; actor?: string | null } = {}): Promise<BareChain> {
  const g = await startRole(['--role', 'grpc', '--db', databaseUrl, '--pool', String(opts.pool ?? 4), '--actor', opts.actor ?? '']);
  const h = await startRole(['--role', 'http', '--grpc-port', String(g.port)]).catch((err: unknown) => {
    g.child.kill();
    throw err;
  });
  for (const c of [g.child, h.child]) c.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${h.port}`,
    pids: { http: h.child.pid!, grpc: g.child.pid! },
    stop() {
      h.child.kill();
      g.child.kill();
    },
  };
}

if (process.argv.includes('--role')) {
  (arg('role') === 'grpc' ? grpcRole() : httpRole()).catch((err: unknown) => {
    process.stderr.write(`bare chain: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
