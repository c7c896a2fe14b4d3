/**
 * Sync imports, mappings and the changes lookup against the real PostgreSQL through records' signed
 * SyncService (docs/api-notes.md, "Sync"): links by external id in any order and across batches, one
 * transaction per batch (a bad item anywhere writes nothing), unchanged items write nothing, dry runs,
 * the schema checks of a create or patch (fields, links, transitions), mappings both ways, echoes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrpcClient, newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf, TEST_INTERNAL_AUTH_SECRET } from '@reelbase/lib-testkit';
import { syncv1 } from '@reelbase/proto';
import pg from 'pg';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { startRecordsWorld, text, type RecordsWorld } from './records.world.js';

const asService: CallContext = { requestId: 'sy-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const adminId = newId();
const admin: CallContext = { requestId: 'sy-admin', principal: { userId: adminId, role: 'Admin', authKind: 'token' } };
const supervisor: CallContext = { requestId: 'sy-sup', principal: { userId: newId(), role: 'Supervisor', authKind: 'token' } };

const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
    { code: 'User', project_scoped: false, fields: [text('name'), text('email')] },
    { code: 'Sequence', project_scoped: true, fields: [text('code')] },
    {
      code: 'Shot',
      project_scoped: true,
      fields: [text('code'), { code: 'sequence', type: 'link', link_types: ['Sequence'] }, { code: 'cut_in', type: 'integer' }],
    },
    {
      code: 'Task',
      project_scoped: true,
      fields: [text('name'), { code: 'entity', type: 'link' }, { code: 'assignees', type: 'multi_link', link_types: ['User'] }],
    },
  ],
  statuses: [{ code: 'wtg' }, { code: 'ip' }, { code: 'fin' }],
  steps: [],
  priorities: [],
  transitions: { Shot: [{ from: 'wtg', to: ['ip'] }] },
  task_templates: [],
};

let world: RecordsWorld;
let sql: pg.Client;
let sync: GrpcClient<syncv1.SyncServiceClient>;

beforeAll(async () => {
  world = await startRecordsWorld('sync');
  sql = world.sql;
  await world.client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  sync = createGrpcClient(syncv1.SyncServiceClient, syncv1.SyncServiceService, {
    internalAuthSecret: TEST_INTERNAL_AUTH_SECRET,
    name: 'sync-test',
    address: `127.0.0.1:${world.running.grpcPort}`,
  });
});

afterAll(async () => {
  sync?.close();
  await world?.stop();
});

interface Answer {
  created: number;
  updated: number;
  unchanged: number;
  items: { external_id: string; entity_type: string; id: string; result: string }[];
}
const importBatch = async (body: Record<string, unknown>, ctx: CallContext = admin): Promise<Answer> =>
  JSON.parse((await sync.call.import({ bodyJson: JSON.stringify(body) }, ctx)).json) as Answer;
const count = async (table: string): Promise<number> => Number((await sql.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);
const row = async (id: string) =>
  (
    await sql.query<{ data: Record<string, unknown>; status: string | null; updated_at: Date; project_id: string; created_by: string }>(
      'select * from records.record where id = $1',
      [id],
    )
  ).rows[0]!;

describe('sync import', () => {
  it('resolves links by external id within a batch whatever the order, and against earlier batches', async () => {
    // Tasks first, their shot and user after them, the project last.
    const first = await importBatch({
      source: 'sg',
      items: [
        {
          external_id: 't1',
          entity_type: 'Task',
          project_external_id: 'p1',
          data: { name: 'comp', entity: { type: 'Shot', external_id: 's1' }, assignees: [{ type: 'User', external_id: 'u1' }] },
        },
        {
          external_id: 's1',
          entity_type: 'Shot',
          project_external_id: 'p1',
          status: 'wtg',
          data: { code: 'sh010', sequence: { type: 'Sequence', external_id: 'q1' } },
        },
        { external_id: 'q1', entity_type: 'Sequence', project_external_id: 'p1', data: { code: 'sq01' } },
        { external_id: 'u1', entity_type: 'User', data: { name: 'Ann', email: 'ann@example.com' } },
        { external_id: 'p1', entity_type: 'Project', data: { name: 'Pilot', code: 'pilot' } },
      ],
    });
    expect(first).toMatchObject({ created: 5, updated: 0, unchanged: 0 });
    const id = Object.fromEntries(first.items.map((i) => [i.external_id, i.id]));
    const task = await row(id.t1!);
    expect(task.data).toEqual({ name: 'comp', entity: { type: 'Shot', id: id.s1 }, assignees: [{ type: 'User', id: id.u1 }] });
    expect(task.project_id).toBe(id.p1);
    expect(task.created_by).toBe(adminId);
    expect((await row(id.s1!)).data.sequence).toEqual({ type: 'Sequence', id: id.q1 });

    // A later batch links to records of the first one by their external ids.
    const second = await importBatch({
      source: 'sg',
      items: [{ external_id: 't2', entity_type: 'Task', project_external_id: 'p1', data: { name: 'anim', entity: { type: 'Shot', external_id: 's1' } } }],
    });
    expect((await row(second.items[0]!.id)).data.entity).toEqual({ type: 'Shot', id: id.s1 });
    // Another source does not see sg's external ids.
    const other = await appErrorOf(
      importBatch({
        source: 'kitsu',
        items: [{ external_id: 't9', entity_type: 'Task', project_id: id.p1, data: { name: 'x', entity: { type: 'Shot', external_id: 's1' } } }],
      }),
    );
    expect(other.problems).toEqual([expect.objectContaining({ loc: ['items', 0, 'data', 'entity'], type: 'link_not_found' })]);
  });

  it('leaves an unchanged item untouched (no write, no mark), merges a changed one as a PATCH does', async () => {
    const body = {
      source: 'sg2',
      items: [
        { external_id: 'p', entity_type: 'Project', data: { name: 'Two', code: 'two' } },
        { external_id: 's', entity_type: 'Shot', project_external_id: 'p', status: 'wtg', data: { code: 'a', cut_in: 1001 } },
      ],
    };
    const first = await importBatch(body);
    const shot = first.items[1]!.id;
    const before = await row(shot);
    const writes = await count('records.sync_write');
    const outbox = await sql.query<{ n: string }>('select last_value as n from records.outbox_seq_seq');
    const again = await importBatch(body);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    expect(again.items.map((i) => i.id)).toEqual(first.items.map((i) => i.id));
    expect((await row(shot)).updated_at).toEqual(before.updated_at);
    expect(await count('records.sync_write')).toBe(writes);
    expect((await sql.query<{ n: string }>('select last_value as n from records.outbox_seq_seq')).rows[0]!.n).toBe(outbox.rows[0]!.n);

    const changed = await importBatch({ source: 'sg2', items: [{ external_id: 's', entity_type: 'Shot', data: { cut_in: null, code: 'b' } }] });
    expect(changed).toMatchObject({ updated: 1, unchanged: 0 });
    expect((await row(shot)).data).toEqual({ code: 'b' });
    expect(await count('records.sync_write')).toBe(writes + 1);
  });

  it('reads without row locks: an unchanged re-import passes a row another writer holds; a change made meanwhile is planned again', async () => {
    const body = {
      source: 'sg-lock',
      items: [
        { external_id: 'p', entity_type: 'Project', data: { name: 'Lock', code: 'lock' } },
        { external_id: 's', entity_type: 'Shot', project_external_id: 'p', data: { code: 'a', cut_in: 1001 } },
      ],
    };
    const shot = (await importBatch(body)).items[1]!.id;
    const holder = new pg.Client({ connectionString: world.db.url });
    await holder.connect();
    try {
      // Another writer holds the row: an import that changes nothing does not wait for it.
      await holder.query('begin');
      await holder.query('select id from records.record where id = $1 for update', [shot]);
      const unchanged = await Promise.race([importBatch(body), new Promise<'blocked'>((r) => setTimeout(() => r('blocked'), 3000).unref())]);
      expect(unchanged).toMatchObject({ unchanged: 2, updated: 0 });

      // An import that changes the row waits for it, finds it changed since it read it, and merges its
      // change into the row as it is now (the other writer's change kept).
      await holder.query(`update records.record set data = data || '{"cut_in": 7}'::jsonb, updated_at = clock_timestamp() where id = $1`, [shot]);
      const changing = importBatch({ source: 'sg-lock', items: [{ external_id: 's', entity_type: 'Shot', data: { code: 'b' } }] });
      await new Promise((r) => setTimeout(r, 300));
      await holder.query('commit');
      expect(await changing).toMatchObject({ updated: 1 });
      expect((await row(shot)).data).toEqual({ code: 'b', cut_in: 7 });
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
  });

  it.each([0, 2, 4])('rejects the whole batch when item %i is bad, writing nothing', async (bad) => {
    const items: Record<string, unknown>[] = [
      { external_id: `bp${bad}`, entity_type: 'Project', data: { name: 'Bad', code: `bad${bad}` } },
      { external_id: 'q', entity_type: 'Sequence', project_external_id: `bp${bad}`, data: { code: 'q' } },
      { external_id: 's', entity_type: 'Shot', project_external_id: `bp${bad}`, data: { code: 's' } },
      { external_id: 'u', entity_type: 'User', data: { name: 'U' } },
      { external_id: 't', entity_type: 'Task', project_external_id: `bp${bad}`, data: { name: 't', entity: { type: 'Shot', external_id: 's' } } },
    ];
    items[bad] = { ...items[bad], data: { ...(items[bad]!.data as object), nonsense: 1 } };
    const [records, mappings] = [await count('records.record'), await count('records.sync_mapping')];
    const err = await appErrorOf(importBatch({ source: `bad${bad}`, items }));
    expect(err.kind).toBe('invalid');
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['items', bad, 'data', 'nonsense'], type: 'extra_forbidden' })]);
    expect([await count('records.record'), await count('records.sync_mapping')]).toEqual([records, mappings]);
  });

  it('reports every problem of the batch at once, located under items', async () => {
    const err = await appErrorOf(
      importBatch({
        source: 'many',
        items: [
          { external_id: 'a', entity_type: 'Shot', data: { code: 1 } },
          { external_id: 'b', entity_type: 'Shot', project_id: newId(), status: 'nope', data: { sequence: { type: 'Sequence', external_id: 'nowhere' } } },
        ],
      }),
    );
    expect(err.problems.map((p) => p.loc)).toEqual(
      expect.arrayContaining([
        ['items', 0, 'project_id'],
        ['items', 0, 'data', 'code'],
        ['items', 1, 'data', 'sequence'],
        ['items', 1, 'status'],
        ['items', 1, 'project_id'],
      ]),
    );
  });

  it('checks transitions as a patch does (409 with the index) and imports are Admin only', async () => {
    const first = await importBatch({
      source: 'tr',
      items: [
        { external_id: 'p', entity_type: 'Project', data: { name: 'Tr', code: 'tr' } },
        { external_id: 's', entity_type: 'Shot', project_external_id: 'p', status: 'wtg', data: { code: 's' } },
      ],
    });
    const err = await appErrorOf(importBatch({ source: 'tr', items: [{ external_id: 's', entity_type: 'Shot', status: 'fin', data: {} }] }));
    expect(err).toMatchObject({ kind: 'conflict', code: 'transition_not_allowed', extra: expect.objectContaining({ index: 0 }) });
    expect((await row(first.items[1]!.id)).status).toBe('wtg');
    expect((await importBatch({ source: 'tr', items: [{ external_id: 's', entity_type: 'Shot', status: 'ip', data: {} }] })).updated).toBe(1);
    expect((await appErrorOf(importBatch({ source: 'tr', items: [{ external_id: 'x', entity_type: 'Project', data: {} }] }, supervisor))).kind).toBe(
      'forbidden',
    );
  });

  it("writes a User's email by the login rule of POST /entities/User and refuses FarmJob items; a refused batch writes nothing", async () => {
    const boss = await world.client.call.createRecord({ entityType: 'User', dataJson: JSON.stringify({ name: 'Boss', email: 'boss@studio.test' }) }, asService);
    const gone = await world.client.call.createRecord({ entityType: 'User', dataJson: JSON.stringify({ name: 'Gone', email: 'gone@studio.test' }) }, asService);
    await world.client.call.retireRecord({ entityType: 'User', id: gone.record!.id }, asService);

    const ann = await importBatch({ source: 'login', items: [{ external_id: 'u1', entity_type: 'User', data: { name: 'Ann', email: ' Ann@Studio.TEST ' } }] });
    expect((await row(ann.items[0]!.id)).data.email).toBe('ann@studio.test');

    // Records and mappings (the outbox drains on its own as the relay publishes).
    const before = [await count('records.record'), await count('records.sync_mapping'), await count('records.sync_write')];
    const refused = await appErrorOf(
      importBatch({
        source: 'login2',
        items: [
          { external_id: 'p', entity_type: 'Project', data: { name: 'Fine', code: 'fine' } },
          { external_id: 'a', entity_type: 'User', data: { name: 'Ann again', email: 'ANN@studio.test' } },
          { external_id: 'b', entity_type: 'User', data: { name: 'Boss again', email: 'Boss@Studio.Test' } },
          { external_id: 'g', entity_type: 'User', data: { name: 'Gone again', email: 'gone@studio.test' } },
          { external_id: 'n1', entity_type: 'User', data: { name: 'New', email: 'new@studio.test' } },
          { external_id: 'n2', entity_type: 'User', data: { name: 'New twice', email: 'NEW@studio.test' } },
          { external_id: 'bad', entity_type: 'User', data: { name: 'Bad', email: 'not an address' } },
          { external_id: 'none', entity_type: 'User', data: { name: 'None', email: null } },
        ],
      }),
    );
    expect(refused.problems.map((p) => [p.loc, p.type])).toEqual([
      [['items', 1, 'data', 'email'], 'duplicate_code'],
      [['items', 2, 'data', 'email'], 'duplicate_code'],
      [['items', 3, 'data', 'email'], 'duplicate_code'],
      [['items', 5, 'data', 'email'], 'duplicate_code'],
      [['items', 6, 'data', 'email'], 'value_error'],
      [['items', 7, 'data', 'email'], 'missing'],
    ]);
    // FarmJob records are the farm's: refused at the item's type, whatever the rest of the batch.
    const farm = await appErrorOf(
      importBatch({
        source: 'login2',
        items: [
          { external_id: 'p', entity_type: 'Project', data: { name: 'Fine', code: 'fine' } },
          { external_id: 'j', entity_type: 'FarmJob', project_external_id: 'p', status: 'done', data: { name: 'fake', chunks_total: 1, chunks_done: 1 } },
        ],
      }),
    );
    expect(farm.problems).toEqual([{ loc: ['items', 1, 'entity_type'], msg: expect.stringMatching(/POST \/farm\/jobs/), type: 'value_error' }]);
    expect([await count('records.record'), await count('records.sync_mapping'), await count('records.sync_write')]).toEqual(before);

    // The same login in another case is no change; another address is not an import's to make.
    expect(
      (await importBatch({ source: 'login', items: [{ external_id: 'u1', entity_type: 'User', data: { name: 'Ann', email: 'ANN@studio.test' } }] })).unchanged,
    ).toBe(1);
    const moved = await appErrorOf(importBatch({ source: 'login', items: [{ external_id: 'u1', entity_type: 'User', data: { email: 'ann2@studio.test' } }] }));
    expect(moved.problems).toMatchObject([{ loc: ['items', 0, 'data', 'email'], type: 'value_error', msg: expect.stringContaining('PATCH /entities/User/') }]);
    expect((await row(ann.items[0]!.id)).data.email).toBe('ann@studio.test');
    expect((await row(boss.record!.id)).data.email).toBe('boss@studio.test');
    // A User without an address, and one with a new address, are created as /entities/User creates them.
    const fresh = await importBatch({
      source: 'login2',
      items: [
        { external_id: 'n1', entity_type: 'User', data: { name: 'New', email: 'New@Studio.test' } },
        { external_id: 'q', entity_type: 'User', data: { name: 'Quiet' } },
      ],
    });
    expect((await row(fresh.items[0]!.id)).data.email).toBe('new@studio.test');
  });

  it('answers a dry run like the import and writes nothing', async () => {
    const body = { source: 'dry', items: [{ external_id: 'p', entity_type: 'Project', data: { name: 'Dry', code: 'dry' } }] };
    const records = await count('records.record');
    const dry = await importBatch({ ...body, dry_run: true });
    expect(dry).toMatchObject({ created: 1, items: [expect.objectContaining({ result: 'created' })] });
    expect(await count('records.record')).toBe(records);
    expect((await importBatch(body)).created).toBe(1);
  });

  it('answers mappings both ways and changes with external ids and echoes', async () => {
    const a = await importBatch({ source: 'mapa', items: [{ external_id: 'P-1', entity_type: 'Project', data: { name: 'M', code: 'mm' } }] });
    const id = a.items[0]!.id;
    await importBatch({ source: 'mapb', items: [{ external_id: '77', entity_type: 'Project', data: { name: 'M2' } }] }).catch(() => undefined);
    const byKey = JSON.parse((await sync.call.mappings({ source: 'mapa', entityType: 'Project', externalId: 'P-1' }, admin)).json) as { items: unknown[] };
    expect(byKey.items).toEqual([{ source: 'mapa', entity_type: 'Project', external_id: 'P-1', id }]);
    const byId = JSON.parse((await sync.call.mappings({ id }, admin)).json) as { items: unknown[] };
    expect(byId.items).toEqual([{ source: 'mapa', entity_type: 'Project', external_id: 'P-1', id }]);

    const stored = await row(id);
    const at = (
      await sql.query<{ t: string }>(`select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t from records.record where id = $1`, [
        id,
      ])
    ).rows[0]!.t;
    expect(stored).toBeDefined();
    const events = [
      { eventId: 1, entityId: id, createdAt: at },
      { eventId: 2, entityId: newId(), createdAt: at },
    ];
    const asked = async (source?: string) =>
      (
        JSON.parse((await sync.call.changes({ events, source }, admin)).json) as {
          items: { is_record: boolean; echo: boolean; external_ids: object; record: unknown }[];
        }
      ).items;
    const mine = await asked('mapa');
    expect(mine[0]).toMatchObject({ is_record: true, echo: true, external_ids: { mapa: 'P-1' } });
    expect(mine[1]).toMatchObject({ is_record: false, record: null });
    expect((await asked('other'))[0]).toMatchObject({ echo: false, record: expect.objectContaining({ id }) });
  });

  it("tells a record's own events from other events naming a record's id: only an event of the record's type (or a type renamed to it) is a record's", async () => {
    const rep = (await importBatch({ source: 'kinds', items: [{ external_id: 'p', entity_type: 'Project', data: { name: 'K', code: 'kinds' } }] })).items[0]!
      .id;
    const at = new Date().toISOString();
    const ref = (eventId: number, entityType: string | undefined, entityId = rep) => ({ eventId, entityId, createdAt: at, entityType });
    const events = [
      ref(1, 'Project'),
      // A site-sync state's event carries its Representation's id; schema, action and schedule events ids of their own.
      ref(2, 'SiteSync'),
      ref(3, 'Schedule'),
      ref(4, 'Schema.Field', newId()),
      ref(5, 'Action', newId()),
      // A type since renamed to Project (in two steps): its old events are still the record's.
      ref(6, 'Production'),
      ref(7, 'Show'),
      // An older gateway does not send the type: the record's existence decides.
      ref(8, undefined),
    ];
    await sql.query(
      `insert into records.applied_rename (journal_id, kind, from_code, to_code, rewritten)
       values ($1, 'entity_type', 'Show', 'Production', 0), ($2, 'entity_type', 'Production', 'Project', 0), ($3, 'status', 'Schedule', 'Project', 0)`,
      [newId(), newId(), newId()],
    );
    const items = (JSON.parse((await sync.call.changes({ events }, admin)).json) as { items: { event_id: number; is_record: boolean }[] }).items;
    expect(items.filter((i) => i.is_record).map((i) => i.event_id)).toEqual([1, 6, 7, 8]);
  });
});
