/**
 * Group commit of creates (docs/architecture.md, "The write path and its events") against the real
 * PostgreSQL: concurrent creates are written together (one transaction: their rows share an xmin),
 * each with its link rows and its event published once; a create whose project or link target is not live, or
 * whose id is taken, fails alone and its neighbours are written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import type pg from 'pg';
import { querySnapshot, startRecordsWorld, text, type RecordsWorld } from './records.world.js';
import { StreamReader } from './stream.helper.js';

const ADMIN = newId();
const asAdmin: CallContext = { requestId: 'gc-admin', principal: { userId: ADMIN, role: 'Admin', authKind: 'token' } };
const asService: CallContext = { requestId: 'gc-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };

const SNAPSHOT = querySnapshot([
  { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
  { code: 'User', project_scoped: false, fields: [text('name')] },
  { code: 'Shot', project_scoped: true, fields: [text('code'), { code: 'owner', type: 'link', link_types: ['User'] }] },
]);

let w: RecordsWorld;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let sql: pg.Client;
let stream: StreamReader;

beforeAll(async () => {
  w = await startRecordsWorld('groupcommit');
  ({ client, sql } = w);
  stream = await StreamReader.open(w.prefix);
  await client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
}, 60_000);

afterAll(async () => {
  await stream?.close();
  await w?.stop();
});

async function create(entityType: string, projectId: string | undefined, data: object, ctx = asAdmin, id?: string): Promise<recordsv1.Record> {
  return (await client.call.createRecord({ entityType, projectId, id, dataJson: JSON.stringify(data) }, ctx)).record!;
}

async function rowsOf(ids: string[]): Promise<{ records: number; links: number; transactions: number }> {
  const r = await sql.query<{ records: string; links: string; transactions: string }>(
    `select (select count(*) from records.record where id = any($1::uuid[])) as records,
            (select count(*) from records.record_link where from_id = any($1::uuid[])) as links,
            (select count(distinct xmin::text) from records.record where id = any($1::uuid[])) as transactions`,
    [ids],
  );
  const row = r.rows[0]!;
  return { records: Number(row.records), links: Number(row.links), transactions: Number(row.transactions) };
}

describe('group commit of creates', () => {
  it('writes concurrent creates together, each with its outbox row and link rows', async () => {
    const project = await create('Project', undefined, { name: 'Group', code: 'group' });
    const user = await create('User', undefined, { name: 'Ann' });
    const shots = await Promise.all(
      Array.from({ length: 40 }, (_, i) => create('Shot', project.id, i % 2 ? { code: `sh${i}`, owner: { type: 'User', id: user.id } } : { code: `sh${i}` })),
    );
    const ids = shots.map((s) => s.id);
    expect(new Set(ids).size).toBe(40);
    const rows = await rowsOf(ids);
    expect(rows.records).toBe(40);
    expect(rows.links).toBe(20);
    expect(rows.transactions).toBeLessThan(40);
    // Each record answered with its own stored form, and its create event published once, stamped with its updated_at.
    await stream.exactly(ids[ids.length - 1]!, 1);
    const events = (await stream.all()).filter((e) => ids.includes(e.payload.entity_id));
    expect(events).toHaveLength(40);
    for (const [i, s] of shots.entries()) {
      expect(JSON.parse(s.dataJson)).toMatchObject({ code: `sh${i}` });
      expect(events.find((e) => e.payload.entity_id === s.id)!.payload).toMatchObject({ action: 'create', occurred_at: s.updatedAt });
    }
  });

  it('fails a create whose project, link or id is wrong on its own and writes its neighbours', async () => {
    const project = await create('Project', undefined, { name: 'Mixed', code: 'mixed' });
    const user = await create('User', undefined, { name: 'Bo' });
    const taken = newId();
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => create('Shot', project.id, { code: `ok${i}`, owner: { type: 'User', id: user.id } })),
      create('Shot', newId(), { code: 'no-project' }),
      create('Shot', project.id, { code: 'dead-link', owner: { type: 'User', id: newId() } }),
      create('Shot', project.id, { code: 'first' }, asService, taken),
      create('Shot', project.id, { code: 'second' }, asService, taken),
      ...Array.from({ length: 10 }, (_, i) => create('Shot', project.id, { code: `ok${10 + i}` })),
    ]);
    const ok = outcomes.filter((o): o is PromiseFulfilledResult<recordsv1.Record> => o.status === 'fulfilled').map((o) => o.value);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason as AppError);
    expect(ok.map((r) => JSON.parse(r.dataJson).code as string).filter((c) => c.startsWith('ok'))).toHaveLength(20);
    expect(ok).toHaveLength(21);
    expect(failed.map((e) => e instanceof AppError && e.kind).sort()).toEqual(['conflict', 'invalid', 'invalid']);
    const rows = await rowsOf(ok.map((r) => r.id));
    expect(rows.records).toBe(21);
    expect(rows.links).toBe(10);
    const written = await sql.query<{ n: string }>(`select count(*) as n from records.record where data->>'code' in ('no-project', 'dead-link')`);
    expect(Number(written.rows[0]!.n)).toBe(0);
  });
});
