/**
 * Crash recovery of the outbox, with the service as a real child process killed by its
 * fault switch: an event committed but not yet published is published after a restart, and
 * one published but not yet deleted is not duplicated.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createGrpcClient, createLogger, newId, openOrm, type CallContext } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { recordsv1 } from '@reelbase/proto';
import { RECORDS_MIGRATIONS } from '../src/migrations.js';
import { OutboxEntitySchema } from '../src/kernel/store/outbox.entity.js';
import { RecordEntitySchema } from '../src/kernel/store/record.entity.js';
import { startChild, stopChild, type Child } from './child.helper.js';
import { StreamReader } from './stream.helper.js';

const asService: CallContext = { requestId: 'crash', principal: { userId: '', role: 'Service', authKind: 'service' } };

let db: TestDatabase;
let prefix: string;
let orm: MikroORM;
let stream: StreamReader;
let child: Child | undefined;

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: db.url,
  NATS_PREFIX: prefix,
  INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
  GRPC_PORT: '0',
  HTTP_PORT: '0',
  OUTBOX_POLL_MS: '100',
  LOG_LEVEL: 'info',
  ...extra,
});

const sql = async <T>(query: string, params: unknown[] = []) => (await orm.em.getConnection().execute(query, params)) as T[];

/** Creates a Project with a known id through the child; the call may fail when the child dies. */
async function createThrough(c: Child, id: string): Promise<unknown> {
  const client = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'records',
    address: `127.0.0.1:${c.grpcPort}`,
    deadlineMs: 10_000,
  });
  try {
    return await client.call.createRecord({ entityType: 'Project', id, dataJson: '{"name":"Crash"}' }, asService);
  } catch (err) {
    return err;
  } finally {
    client.close();
  }
}

beforeAll(async () => {
  // The child runs the compiled service.
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc', { paths: [process.cwd()] });
  execFileSync(process.execPath, [tsc, '-b', new URL('../tsconfig.json', import.meta.url).pathname], { stdio: 'inherit' });
  db = await createTestDatabase();
  prefix = uniquePrefix('crash');
  // The first child creates the schema; this connection only reads it.
  child = await startChild(env());
  await stopChild(child);
  orm = await openOrm({
    clientUrl: db.url,
    schema: 'records',
    entities: [RecordEntitySchema, OutboxEntitySchema],
    migrations: RECORDS_MIGRATIONS,
    logger: createLogger('records-test', 'silent'),
  });
  stream = await StreamReader.open(prefix);
}, 120_000);

afterAll(async () => {
  await stopChild(child);
  await stream?.close();
  await orm?.close(true);
  await db?.drop();
  if (prefix) await deleteStreams(prefix);
});

describe('outbox crash recovery', () => {
  it('publishes after a restart what a crash right after commit left in the outbox', async () => {
    child = await startChild(env({ RECORDS_FAULT: 'crash_after_commit' }));
    const id = newId();
    const answer = await createThrough(child, id);
    expect(await child.exited).toBe('SIGKILL');
    expect(answer).toBeInstanceOf(Error); // the answer was never sent
    expect(child.lines.some((l) => l.includes('"level":"warn"') && l.includes('RECORDS_FAULT=crash_after_commit'))).toBe(true);

    expect(await sql(`select id from records.record where id = ?`, [id])).toHaveLength(1);
    expect(await sql(`select event_id from records.outbox`)).toHaveLength(1);
    expect(await stream.exactly(id, 0, 0, 500)).toHaveLength(0);

    child = await startChild(env());
    const events = await stream.exactly(id, 1);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ action: 'create', entity_id: id, changes: { name: 'Crash' } });
    expect(events[0]!.subject).toBe(`${prefix}events.Project.create`);
    expect(await sql(`select event_id from records.outbox`)).toHaveLength(0);
    await stopChild(child);
  }, 60_000);

  it('does not duplicate what a crash between publish and delete re-publishes', async () => {
    child = await startChild(env({ RECORDS_FAULT: 'crash_after_publish' }));
    const id = newId();
    await createThrough(child, id);
    expect(await child.exited).toBe('SIGKILL');

    expect(await sql(`select id from records.record where id = ?`, [id])).toHaveLength(1);
    const left = await sql<{ event_id: string }>(`select event_id from records.outbox`);
    expect(left).toHaveLength(1);
    const published = await stream.exactly(id, 1);
    expect(published).toHaveLength(1);
    expect(published[0]!.msgId).toBe(left[0]!.event_id);

    child = await startChild(env());
    // The restarted relay re-publishes the row and deletes it; JetStream drops the copy.
    const deadline = Date.now() + 10_000;
    while ((await sql(`select 1 from records.outbox`)).length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await sql(`select 1 from records.outbox`)).toHaveLength(0);
    expect(await stream.exactly(id, 1)).toHaveLength(1);
    expect(child.lines.some((l) => l.includes('RECORDS_FAULT'))).toBe(false);
    await stopChild(child);
  }, 60_000);
});
