/**
 * What the records schema specs share: two records replicas sharing one database (as two pods
 * would), a plain `pg` client on it, a schema snapshot like the seeded one with a custom `Gadget`,
 * and the writes and reads the specs make through them.
 */
import { afterAll, beforeAll } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, type TestDatabase } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import type { SchemaSnapshot, SnapshotEntityType } from '../src/kernel/domain/schema.snapshot.js';
import type { RunningRecords } from '../src/service.js';
import { startRecordsReplica } from './records.world.js';

export type Client = GrpcClient<recordsv1.RecordsServiceClient>;

export const asAdmin: CallContext = { requestId: 'r-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
export const asArtist: CallContext = { requestId: 'r-artist', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };
export const asService: CallContext = { requestId: 'r-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };

export let db: TestDatabase;
export let prefix: string;
export let sql: pg.Client;
const replicas: RunningRecords[] = [];
const clients: Client[] = [];
export let a: Client;
export let b: Client;

/**
 * The hooks of a spec file: two records replicas on a new database (their clients `a` and `b`,
 * and `sql` on the database) before its tests, no schema applied yet; all of it undone after them.
 */
export function useSchemaReplicas(): void {
  beforeAll(async () => {
    replicas.length = 0;
    clients.length = 0;
    version = 0;
    db = await createTestDatabase();
    prefix = uniquePrefix('schema');
    for (let i = 0; i < 2; i++) {
      const { running, client } = await startRecordsReplica(db.url, prefix, String(i), { OUTBOX_POLL_MS: '200' });
      replicas.push(running);
      clients.push(client);
    }
    [a, b] = clients as [Client, Client];
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const r of replicas) await r.stop();
    await sql?.end();
    await db?.drop();
    if (prefix) await deleteStreams(prefix);
  });
}

const text = (code: string) => ({ code, type: 'text' as const });

/** A schema like the seeded one, with a custom `Gadget` whose `size` options vary. */
export function snapshot(version: number, sizes: string[] = ['small', 'large'], extra: Partial<SchemaSnapshot> = {}): SchemaSnapshot {
  const types: SnapshotEntityType[] = [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code'), { code: 'overrides', type: 'json' }] },
    { code: 'Sequence', project_scoped: true, fields: [text('code')] },
    {
      code: 'Shot',
      project_scoped: true,
      fields: [text('code'), { code: 'sequence', type: 'link', link_types: ['Sequence'] }, { code: 'cut_in', type: 'integer' }],
    },
    {
      code: 'Task',
      project_scoped: true,
      fields: [text('name'), text('step'), text('priority'), { code: 'entity', type: 'link' }, { code: 'estimate_minutes', type: 'integer' }],
    },
    {
      code: 'Preset',
      project_scoped: false,
      fields: [text('name'), text('target_type'), { code: 'filters', type: 'json' }, { code: 'fields', type: 'json' }, { code: 'order', type: 'json' }],
    },
    {
      code: 'Gadget',
      project_scoped: true,
      fields: [
        { code: 'serial', type: 'text', required: true },
        { code: 'size', type: 'enum', options: sizes.map((code) => ({ code })) },
        { code: 'tags', type: 'multi_enum', options: [{ code: 'red' }, { code: 'blue' }] },
        { code: 'shot', type: 'link', link_types: ['Shot'] },
        { code: 'shots', type: 'multi_link', link_types: ['Shot'] },
        { code: 'site', type: 'url' },
        { code: 'grade', type: 'text', default: 'B' },
      ],
    },
  ];
  return {
    version,
    entity_types: types,
    statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }, { code: 'omit', entity_types: ['Shot'] }],
    steps: [{ code: 'anim' }, { code: 'comp' }],
    priorities: [{ code: 'high' }, { code: 'low' }],
    transitions: {},
    task_templates: [],
    ...extra,
  };
}

export let version = 0;
/** Records that `v` is the version stored now (applied by the test itself). */
export function appliedVersion(v: number): void {
  version = v;
}

/** Applies the next snapshot through `via` and returns its version. */
export async function applyNext(via: Client, sizes?: string[], extra?: Partial<SchemaSnapshot>): Promise<number> {
  version += 1;
  await via.call.applySchema({ version, snapshotJson: JSON.stringify(snapshot(version, sizes, extra)) }, asService);
  return version;
}

export const create = (via: Client, entityType: string, projectId: string | undefined, data: Record<string, unknown>, ctx = asAdmin, status?: string) =>
  via.call.createRecord({ entityType, projectId, status, dataJson: JSON.stringify(data) }, ctx).then((r) => r.record!);
export const dataOf = (r: recordsv1.Record) => JSON.parse(r.dataJson) as Record<string, unknown>;
export const link = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });

export async function row(id: string): Promise<{ entity_type: string; status: string | null; data: Record<string, unknown>; updated_at: Date }> {
  const res = await sql.query('select entity_type, status, data, updated_at from records.record where id = $1', [id]);
  return res.rows[0];
}

/** The last outbox sequence number handed out (rows are deleted once published; the sequence is not). */
export async function outboxSeq(): Promise<string> {
  return (await sql.query('select last_value::text as v from records.outbox_seq_seq')).rows[0].v;
}

export async function count(where: string): Promise<number> {
  return (await sql.query(`select count(*)::int as n from records.record where ${where}`)).rows[0].n;
}
