/**
 * One records service for an integration spec: its own database and NATS prefix, the service on
 * free ports, a gRPC client signed with the test secret, and a plain `pg` client on the database.
 * `stop()` undoes all of it.
 */
import { createGrpcClient, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { idempotencyv1, recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import { parseRecordsConfig } from '../src/config.js';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { startRecords, type RunningRecords } from '../src/service.js';

export interface RecordsWorld {
  db: TestDatabase;
  prefix: string;
  running: RunningRecords;
  client: GrpcClient<recordsv1.RecordsServiceClient>;
  sql: pg.Client;
  stop(): Promise<void>;
}

/** One records service on `databaseUrl` and `prefix` (one of several replicas, say) and a client of it, named `records-<name>`. */
export async function startRecordsReplica(
  databaseUrl: string,
  prefix: string,
  name: string,
  env: Record<string, string> = {},
): Promise<{ running: RunningRecords; client: GrpcClient<recordsv1.RecordsServiceClient> }> {
  const running = await startRecords(
    parseRecordsConfig({
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      DATABASE_URL: databaseUrl,
      NATS_PREFIX: prefix,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      ...env,
    }),
  );
  const client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: `records-${name}`,
    address: `127.0.0.1:${running.grpcPort}`,
  });
  return { running, client };
}

/** Starts it; `name` names the NATS prefix and the client, `env` adds to (or overrides) the service's settings. */
export async function startRecordsWorld(name: string, env: Record<string, string> = {}): Promise<RecordsWorld> {
  const db = await createTestDatabase();
  const prefix = uniquePrefix(name);
  let running: RunningRecords | undefined;
  let client: GrpcClient<recordsv1.RecordsServiceClient> | undefined;
  let sql: pg.Client | undefined;
  const stop = async () => {
    client?.close();
    await running?.stop();
    await sql?.end();
    await db.drop();
    await deleteStreams(prefix);
  };
  try {
    ({ running, client } = await startRecordsReplica(db.url, prefix, name, env));
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    return { db, prefix, running, client, sql, stop };
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
}

/** A client of the world's IdempotencyService (close it after). */
export function idempotencyClientOf(world: RecordsWorld): GrpcClient<idempotencyv1.IdempotencyServiceClient> {
  return createGrpcClient(idempotencyv1.IdempotencyServiceClient, idempotencyv1.IdempotencyServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'idempotency-test',
    address: `127.0.0.1:${world.running.grpcPort}`,
  });
}

/** A text field of a test schema. */
export const text = (code: string) => ({ code, type: 'text' as const });

/** A version-1 schema of `entityTypes` with the statuses wtg, ip and fin and nothing else (the query specs' schema). */
export function querySnapshot(entityTypes: SchemaSnapshot['entity_types']): SchemaSnapshot {
  return {
    version: 1,
    entity_types: entityTypes,
    statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }],
    steps: [],
    priorities: [],
    transitions: {},
    task_templates: [],
  };
}
