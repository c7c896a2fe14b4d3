/**
 * The bare chain: the smallest program with the gateway's shape — an HTTP process that hands each
 * request to a second process over gRPC, which runs a query's statements on PostgreSQL — and none
 * of the gateway's or records' own work: no framework, no authentication, no validation, no
 * planning (the request carries the plan the bench compiled), no metrics, no logs. What it costs
 * over the raw statements is what two Node processes and the two hops cost on this machine, so it
 * is the lower bound of the gateway's figure (bench/README.md, "Queries on 1,000,000 records").
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
import { runQueryPlan, type QueryPlan } from '@reelbase/records';

const METHOD = '/bench.BareChain/Query';
const same = (b: Buffer): Buffer => b;
const SERVICE: grpc.ServiceDefinition = {
  Query: {
    path: METHOD,
    requestStream: false,
    responseStream: false,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  },
};

function arg(name: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? undefined : process.argv[i + 1];
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

/** The gRPC process: a plan in, the page's records (the JSON texts PostgreSQL wrote) out. */
async function grpcRole(): Promise<void> {
  const pool = new pg.Pool({ connectionString: arg('db'), max: 4 });
  const server = new grpc.Server();
  server.addService(SERVICE, {
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

/** The HTTP process: the request body to the gRPC process, its answer back as `{"items":…}`. */
async function httpRole(): Promise<void> {
  const client = new grpc.Client(`127.0.0.1:${arg('grpc-port')}`, grpc.credentials.createInsecure());
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
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

export interface BareChain {
  url: string;
  stop(): void;
}

/** Starts the gRPC process on `databaseUrl`, then the HTTP process in front of it. */
export async function startBareChain(databaseUrl: string): Promise<BareChain> {
  const g = await startRole(['--role', 'grpc', '--db', databaseUrl]);
  const h = await startRole(['--role', 'http', '--grpc-port', String(g.port)]).catch((err: unknown) => {
    g.child.kill();
    throw err;
  });
  for (const c of [g.child, h.child]) c.removeAllListeners('exit');
  return {
    url: `http://127.0.0.1:${h.port}`,
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
