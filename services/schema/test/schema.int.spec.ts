/**
 * The schema service against the real PostgreSQL and NATS and the real records service
 * (in-process, from its build): two replicas seeding one fresh database at once, a change
 * that answers only once records validates with it, its event on the EVENTS stream, a rename
 * cascaded over the records, and a rename cut short by a crash (SCHEMA_FAULT) completed by
 * the next start. Skipped when records has not been built.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  AppError,
  connectNats,
  createGrpcClient,
  createLogger,
  natsNames,
  newId,
  parseStreamEvent,
  type CallContext,
  type GrpcClient,
  type NatsConnection,
  type StreamEvent,
} from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import { recordsv1, schemav1 } from '@reelbase/proto';
import { parseSchemaConfig } from '../src/config.js';
import { startSchema, type RunningSchema } from '../src/service.js';
import { BUILTIN_STATUSES, BUILTIN_TYPES } from '../src/definitions/domain/builtins.js';

const recordsEntry = fileURLToPath(new URL('../../records/dist/index.js', import.meta.url));
const MAIN_JS = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

interface RecordsModule {
  parseRecordsConfig(env: Record<string, string>): unknown;
  startRecords(config: unknown, logger?: unknown): Promise<{ grpcPort: number; stop(): Promise<void> }>;
}

const admin: CallContext = { requestId: 'int', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };

async function appError(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe.skipIf(!existsSync(recordsEntry))('the schema service with records', () => {
  let db: TestDatabase;
  let prefix: string;
  let records: { grpcPort: number; stop(): Promise<void> };
  let replicas: RunningSchema[] = [];
  let schemaA: GrpcClient<schemav1.SchemaServiceClient>;
  let schemaB: GrpcClient<schemav1.SchemaServiceClient>;
  let recordsClient: GrpcClient<recordsv1.RecordsServiceClient>;
  let sql: pg.Client;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let projectId: string;

  const env = () => ({
    DATABASE_URL: db.url,
    NATS_URL,
    NATS_PREFIX: prefix,
    GRPC_PORT: '0',
    HTTP_PORT: '0',
    LOG_LEVEL: 'silent',
    INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
    SECRETS_KEY: TEST_SECRETS_KEY,
    RECORDS_ADDR: `127.0.0.1:${records.grpcPort}`,
    OUTBOX_POLL_MS: '100',
    // Long, so the crash test sees the unfinished rename before a running replica completes it.
    SCHEMA_SYNC_MS: '600000',
  });
  const client = (port: number) =>
    createGrpcClient(schemav1.SchemaServiceClient, schemav1.SchemaServiceService, {
      name: 'schema',
      address: `127.0.0.1:${port}`,
      internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
      deadlineMs: 30_000,
    });
  const body = (b: unknown, path: Partial<schemav1.JsonBody> = {}): schemav1.JsonBody => ({
    bodyJson: JSON.stringify(b),
    code: '',
    subCode: '',
    entityCode: '',
    ...path,
  });
  const json = (r: schemav1.JsonResult) => JSON.parse(r.json) as Record<string, unknown>;

  /** Every schema event published under the prefix so far. */
  async function schemaEvents(): Promise<{ subject: string; event: StreamEvent }[]> {
    const stream = natsNames(prefix).eventsStream;
    const info = await jsm.streams.info(stream).catch(() => null);
    if (!info) return [];
    const out: { subject: string; event: StreamEvent }[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!m) continue;
      const parsed = parseStreamEvent(m.data);
      if (!parsed.ok) throw new Error(`unreadable event: ${parsed.reason}`);
      if (parsed.event.entity_type.startsWith('Schema.')) out.push({ subject: m.subject, event: parsed.event });
    }
    return out;
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = uniquePrefix('schema');
    const mod = (await import(recordsEntry)) as RecordsModule;
    records = await mod.startRecords(
      mod.parseRecordsConfig({
        DATABASE_URL: db.url,
        NATS_URL,
        NATS_PREFIX: prefix,
        GRPC_PORT: '0',
        HTTP_PORT: '0',
        LOG_LEVEL: 'silent',
        INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
        OUTBOX_POLL_MS: '100',
      }),
    );
    // Two replicas on one fresh database at once: both seed, one wins, nothing twice.
    replicas = await Promise.all([startSchema(parseSchemaConfig(env())), startSchema(parseSchemaConfig(env()))]);
    // Ready once records holds their snapshot.
    for (const r of replicas) await until('readiness', async () => (await fetch(`http://127.0.0.1:${r.httpPort}/readyz`)).status === 200);
    schemaA = client(replicas[0]!.grpcPort);
    schemaB = client(replicas[1]!.grpcPort);
    recordsClient = createGrpcClient(recordsv1.RecordsServiceClient, recordsv1.RecordsServiceService, {
      name: 'records',
      address: `127.0.0.1:${records.grpcPort}`,
      internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    nc = await connectNats(NATS_URL, 'schema-test', createLogger('schema-test', 'silent'));
    jsm = await jetstreamManager(nc);
  }, 60_000);

  afterAll(async () => {
    schemaA?.close();
    schemaB?.close();
    recordsClient?.close();
    for (const r of replicas) await r.stop();
    await records?.stop();
    await sql?.end();
    await nc?.drain();
    if (prefix) await deleteStreams(prefix);
    await db?.drop();
  });

  it('two replicas starting at once seed the built-in types, fields and statuses exactly once', async () => {
    const state = await sql.query<{ version: string }>('select version from schema.state');
    expect(state.rows.map((r) => Number(r.version))).toEqual([1]);
    const types = await sql.query<{ code: string }>("select code from schema.definition where kind = 'entity_type' order by position");
    expect(types.rows.map((r) => r.code)).toEqual(BUILTIN_TYPES.map((t) => t.code));
    const fields = await sql.query<{ n: string }>("select count(*) as n from schema.definition where kind = 'field'");
    expect(Number(fields.rows[0]!.n)).toBe(BUILTIN_TYPES.reduce((n, t) => n + t.fields.length, 0));
    const seeded = await until('the seeding events', async () => {
      const ev = await schemaEvents();
      return ev.length >= BUILTIN_TYPES.length + BUILTIN_STATUSES.length && ev;
    });
    expect(seeded).toHaveLength(BUILTIN_TYPES.length + BUILTIN_STATUSES.length);
    expect(seeded[0]!.subject).toBe(`${prefix}events.Schema_EntityType.create`);
    expect(seeded.map((e) => e.event.entity_type)).toEqual([...BUILTIN_TYPES.map(() => 'Schema.EntityType'), ...BUILTIN_STATUSES.map(() => 'Schema.Status')]);
    // Both replicas agree.
    const a = json(await schemaA.call.getSchema(body({}), admin));
    const b = json(await schemaB.call.getSchema(body({}), admin));
    expect(a).toEqual(b);
    expect((a.entity_types as unknown[]).length).toBe(BUILTIN_TYPES.length);
    // A Project can be written at once (records validates with the seeded snapshot).
    const project = await recordsClient.call.createRecord({ entityType: 'Project', dataJson: JSON.stringify({ name: 'Feature', code: 'feat' }) }, admin);
    projectId = project.record!.id;
  });

  it('a change answers once records validates with it, and its event reaches the stream', async () => {
    const shot = (status: string) =>
      recordsClient.call.createRecord({ entityType: 'Shot', projectId, status, dataJson: JSON.stringify({ code: `sh${newId().slice(-6)}` }) }, admin);
    expect((await appError(shot('ip'))).kind).toBe('invalid');
    const before = (await schemaEvents()).length;
    const created = json(await schemaA.call.createStatus(body({ code: 'ip', name: 'In progress', state: 'in_progress', entity_types: ['Shot'] }), admin));
    expect(created).toMatchObject({ code: 'ip', state: 'in_progress' });
    // Through records at once, no wait.
    expect((await shot('ip')).record!.status).toBe('ip');
    const ev = await until('the status event', async () => (await schemaEvents()).slice(before).find((e) => e.event.entity_type === 'Schema.Status'));
    expect(ev.subject).toBe(`${prefix}events.Schema_Status.create`);
    expect(ev.event).toMatchObject({ action: 'create', project_id: null, actor: admin.principal!.userId, changes: { code: 'ip' } });
    // A duplicate through the other replica.
    expect((await appError(schemaB.call.createStatus(body({ code: 'ip', name: 'x', state: 'done' }), admin))).code).toBe('duplicate_code');
    // Deleting it while a Shot uses it.
    const inUse = await appError(schemaB.call.deleteStatus(body({}, { code: 'ip' }), admin));
    expect(inUse.code).toBe('code_in_use');
    expect(inUse.extra.usage).toBe(1);
  });

  it('a status taken out of the scope of one type: refused while records of that type use it, allowed for another type', async () => {
    await schemaA.call.createStatus(body({ code: 'omit', name: 'Omit', state: 'done' }), admin);
    await recordsClient.call.createRecord({ entityType: 'Shot', projectId, status: 'omit', dataJson: JSON.stringify({ code: 'om1' }) }, admin);
    const err = await appError(schemaA.call.deleteStatus(body({}, { code: 'omit', entityCode: 'Shot' }), admin));
    expect(err.code).toBe('code_in_use');
    expect(err.extra.usage).toBe(1);
    const narrowed = json(await schemaA.call.deleteStatus(body({}, { code: 'omit', entityCode: 'Asset' }), admin));
    expect(narrowed.entity_types).toContain('Shot');
    expect(narrowed.entity_types).not.toContain('Asset');
    // records refuses it for an Asset at once
    const asset = await appError(
      recordsClient.call.createRecord({ entityType: 'Asset', projectId, status: 'omit', dataJson: JSON.stringify({ code: 'a1' }) }, admin),
    );
    expect(asset.kind).toBe('invalid');
  });

  it('a delete racing a write: never both succeed (the write held between its schema lock and its commit)', async () => {
    await schemaA.call.createStatus(body({ code: 'race', name: 'Race', state: 'in_progress' }), admin);
    const shot = (await recordsClient.call.createRecord({ entityType: 'Shot', projectId, dataJson: JSON.stringify({ code: 'race1' }) }, admin)).record!;
    const waiting = async (locktype: string) =>
      Number((await sql.query<{ n: string }>('select count(*) as n from pg_locks where locktype = $1 and not granted', [locktype])).rows[0]!.n) > 0;
    // Hold the Shot's row: the PATCH takes the schema lock (shared) and then waits for the row, before it validates.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from records.record where id = $1 for update', [shot.id]);
      const write = recordsClient.call.updateRecord({ entityType: 'Shot', id: shot.id, status: { value: 'race' } }, admin).then(
        (r) => r.record!,
        (err: unknown) => err as AppError,
      );
      await until('the write waiting for its row', () => waiting('transactionid'));
      // Its usage count (0: the write has not committed) passes; the delete must then wait for the write.
      const del = schemaB.call.deleteStatus(body({}, { code: 'race' }), admin).then(
        (r) => json(r),
        (err: unknown) => err as AppError,
      );
      await until('the delete waiting for the schema lock', () => waiting('advisory'));
      await holder.query('commit');
      const [written, deleted] = await Promise.all([write, del]);
      expect(written).toMatchObject({ id: shot.id, status: 'race' });
      expect(deleted).toBeInstanceOf(AppError);
      expect(deleted).toMatchObject({ kind: 'conflict', code: 'code_in_use', extra: { usage: 1 } });
    } finally {
      await holder.end();
    }
    // Nothing changed: the schema and the snapshot records validates with still have the status.
    const statuses = (json(await schemaA.call.getSchema(body({}), admin)).statuses as { code: string }[]).map((s) => s.code);
    expect(statuses).toContain('race');
    const held = await sql.query<{ codes: string[] }>(
      "select array(select s->>'code' from jsonb_array_elements(snapshot->'statuses') s) as codes from records.schema_state",
    );
    expect(held.rows[0]!.codes).toContain('race');
    // Once the Shot leaves it, the delete goes through.
    await recordsClient.call.updateRecord({ entityType: 'Shot', id: shot.id, status: {} }, admin);
    expect(json(await schemaB.call.deleteStatus(body({}, { code: 'race' }), admin))).toEqual({ code: 'race', deleted: true });
  });

  it('a rename through the other replica cascades over the records and logs one event with the count', async () => {
    await schemaB.call.createStatus(body({ code: 'rev', name: 'Review', state: 'in_progress' }), admin);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await recordsClient.call.createRecord({ entityType: 'Shot', projectId, status: 'rev', dataJson: JSON.stringify({ code: `rv${i}` }) }, admin);
      ids.push(r.record!.id);
    }
    const before = (await schemaEvents()).length;
    const out = json(await schemaB.call.renameStatus(body({ new_code: 'review' }, { code: 'rev' }), admin));
    expect(out).toMatchObject({ kind: 'status', old_code: 'rev', new_code: 'review', rewritten: 3 });
    for (const id of ids) expect((await recordsClient.call.getRecord({ entityType: 'Shot', id }, admin)).record!.status).toBe('review');
    const ev = await until('the rename event', async () => (await schemaEvents()).slice(before).find((e) => e.event.changes.rename !== undefined));
    expect(ev.event.entity_type).toBe('Schema.Status');
    expect(ev.event.changes).toEqual({ rename: { kind: 'status', entity_type: null, field: null, old_code: 'rev', new_code: 'review', rewritten: 3 } });
    const metrics = await (await fetch(`http://127.0.0.1:${replicas[1]!.httpPort}/metrics`)).text();
    expect(metrics).toMatch(/^schema_renames_total\{kind="status",service="schema"\} 1$/m);
    expect(metrics).toMatch(/^schema_rename_records_total\{service="schema"\} 3$/m);
    const journal = await sql.query('select from_code, to_code, rewritten, done_at is not null as done from schema.rename_journal');
    expect(journal.rows).toEqual([{ from_code: 'rev', to_code: 'review', rewritten: '3', done: true }]);
  });

  it('a rename cut short by a crash after its journal entry is completed by the next start', async () => {
    await schemaA.call.createStatus(body({ code: 'hold', name: 'Hold', state: 'blocked' }), admin);
    const shot = await recordsClient.call.createRecord({ entityType: 'Shot', projectId, status: 'hold', dataJson: JSON.stringify({ code: 'held' }) }, admin);
    // A replica that kills itself right after the journal entry commits.
    const proc = spawn(process.execPath, [MAIN_JS], {
      env: { PATH: process.env.PATH ?? '', ...env(), LOG_LEVEL: 'info', SCHEMA_FAULT: 'crash_after_journal' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the faulty replica did not start')), 20_000);
      createInterface({ input: proc.stdout! }).on('line', (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; grpcPort?: number };
          if (entry.msg === 'schema started' && entry.grpcPort) {
            clearTimeout(timer);
            resolve(entry.grpcPort);
          }
        } catch {
          // Not a log line.
        }
      });
    });
    const faulty = client(port);
    try {
      const err = await appError(faulty.call.renameStatus(body({ new_code: 'on_hold' }, { code: 'hold' }), admin));
      expect(err.kind).toBe('unavailable');
    } finally {
      faulty.close();
    }
    expect(await exited).toBe('SIGKILL');
    // The definitions are renamed and the journal entry waits; the record still holds the old code.
    const pending = await sql.query('select from_code, to_code from schema.rename_journal where done_at is null');
    expect(pending.rows).toEqual([{ from_code: 'hold', to_code: 'on_hold' }]);
    expect((await recordsClient.call.getRecord({ entityType: 'Shot', id: shot.record!.id }, admin)).record!.status).toBe('hold');
    // The next start (here a fresh replica; the running ones would also pick it up on their next sync).
    const restarted = await startSchema(parseSchemaConfig(env()));
    replicas.push(restarted);
    await until('the journal entry to be done', async () => {
      const r = await sql.query('select count(*)::int as n from schema.rename_journal where done_at is null');
      return r.rows[0].n === 0;
    });
    expect((await recordsClient.call.getRecord({ entityType: 'Shot', id: shot.record!.id }, admin)).record!.status).toBe('on_hold');
    const ev = await until('the rename event', async () =>
      (await schemaEvents()).find((e) => (e.event.changes.rename as { new_code?: string } | undefined)?.new_code === 'on_hold'),
    );
    expect(ev.event.changes.rename).toMatchObject({ old_code: 'hold', new_code: 'on_hold', rewritten: 1 });
    // Exactly one event for it, whichever replica completed it.
    expect((await schemaEvents()).filter((e) => (e.event.changes.rename as { new_code?: string } | undefined)?.new_code === 'on_hold')).toHaveLength(1);
  }, 60_000);
});
