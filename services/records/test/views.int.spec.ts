/**
 * The work views against the real PostgreSQL through a real gRPC client: a record's notes, a
 * user's tasks and timesheet — what they contain, who may read them, the order of their checks
 * (403, then 422, then 404), and that each statement is answered from its partial index.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient, type Role } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import { recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import { NOTES_SQL, TASKS_SQL, TIMELOGS_SQL } from '../src/core/store/views.repository.js';
import { startRecordsWorld, type RecordsWorld } from './records.world.js';

const as = (role: Role, userId: string = newId()): CallContext => ({ requestId: `r-${role}`, principal: { userId, role, authKind: 'token' } });
const asAdmin = as('Admin');

let world: RecordsWorld;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
let sql: pg.Client;

beforeAll(async () => {
  world = await startRecordsWorld('views', { OUTBOX_POLL_MS: '200' });
  ({ client, sql } = world);
});

afterAll(async () => {
  await world?.stop();
});

async function create(entityType: string, data: Record<string, unknown>, projectId?: string, ctx: CallContext = asAdmin): Promise<recordsv1.Record> {
  return (await client.call.createRecord({ entityType, projectId, dataJson: JSON.stringify(data) }, ctx)).record!;
}
const retire = (r: recordsv1.Record) => client.call.retireRecord({ entityType: r.entityType, id: r.id }, asAdmin);
const ids = (rs: recordsv1.Record[]) => rs.map((r) => r.id);
const link = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });

describe('ListNotes', () => {
  it('lists the live Notes whose links contain the record, oldest first; 404 for a missing, retired or other-typed record', async () => {
    const p = await create('Project', { name: 'Notes', code: 'notes' });
    const a = await create('Shot', { code: 'sh010' }, p.id);
    const b = await create('Shot', { code: 'sh020' }, p.id);
    const n1 = await create('Note', { subject: 'first', links: [link(a)] }, p.id);
    const n2 = await create('Note', { subject: 'both', links: [link(b), link(a)] }, p.id);
    const n3 = await create('Note', { subject: 'b only', links: [link(b)] }, p.id);
    const gone = await create('Note', { subject: 'retired', links: [link(a)] }, p.id);
    await retire(gone);
    // The same id under another type names another record; an author link is not a note link
    // (a service may name any author: people are always their own notes' author).
    const asService: CallContext = { requestId: 'r-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
    await create('Note', { subject: 'asset', links: [{ type: 'Asset', id: a.id }], author: link(a) }, p.id, asService);
    await create('Version', { code: 'v001', links: [link(a)] }, p.id);

    const viewer = as('Viewer');
    expect(ids((await client.call.listNotes({ entityType: 'Shot', recordId: a.id }, viewer)).notes)).toEqual([n1.id, n2.id]);
    expect(ids((await client.call.listNotes({ entityType: 'Shot', recordId: b.id.toUpperCase() }, viewer)).notes)).toEqual([n2.id, n3.id]);
    const first = (await client.call.listNotes({ entityType: 'Shot', recordId: a.id }, viewer)).notes[0]!;
    expect(first).toEqual(n1);

    expect(ids((await client.call.listNotes({ entityType: 'Project', recordId: p.id }, viewer)).notes)).toEqual([]);
    for (const [type, id] of [
      ['Asset', a.id],
      ['Shot', newId()],
      ['Shot', 'nope'],
      ['Shot', "'; drop table records.record; --"],
    ]) {
      expect((await appErrorOf(client.call.listNotes({ entityType: type!, recordId: id! }, viewer))).kind, `${type} ${id}`).toBe('not_found');
    }
    await retire(a);
    expect((await appErrorOf(client.call.listNotes({ entityType: 'Shot', recordId: a.id }, viewer))).kind).toBe('not_found');
  });
});

describe('ListUserTasks and GetTimesheet', () => {
  let artist: recordsv1.Record;
  let other: recordsv1.Record;
  let tasks: recordsv1.Record[];
  let logs: recordsv1.Record[];

  beforeAll(async () => {
    const p = await create('Project', { name: 'Work', code: 'work' });
    artist = await create('User', { name: 'Ana', email: 'ana@example.com', role: 'Artist' });
    other = await create('User', { name: 'Bo', email: 'bo@example.com', role: 'Artist' });
    const shot = await create('Shot', { code: 'sh100' }, p.id);
    tasks = [
      await create('Task', { name: 'comp', entity: link(shot), assignees: [link(artist)] }, p.id),
      await create('Task', { name: 'roto', entity: link(shot), assignees: [link(other), link(artist)] }, p.id),
      await create('Task', { name: 'paint', entity: link(shot), assignees: [link(other)] }, p.id),
      await create('Task', { name: 'retired', entity: link(shot), assignees: [link(artist)] }, p.id),
      await create('Task', { name: 'nobody', entity: link(shot) }, p.id),
    ];
    await retire(tasks[3]!);
    const log = (user: recordsv1.Record, date: string, minutes: number) => create('TimeLog', { user: link(user), task: link(tasks[0]!), date, minutes }, p.id);
    logs = [
      await log(artist, '2026-03-02', 60),
      await log(artist, '2026-02-28', 15),
      await log(artist, '2026-03-31', 45),
      await log(artist, '2026-04-01', 500),
      await log(other, '2026-03-02', 240),
      await log(artist, '2026-03-10', 1000),
    ];
    await retire(logs[5]!);
  });

  it('tasks: the live Tasks whose assignees include the user, oldest first', async () => {
    const self = as('Artist', artist.id);
    expect(ids((await client.call.listUserTasks({ userId: artist.id }, self)).tasks)).toEqual([tasks[0]!.id, tasks[1]!.id]);
    expect(ids((await client.call.listUserTasks({ userId: other.id }, as('Coordinator'))).tasks)).toEqual([tasks[1]!.id, tasks[2]!.id]);
  });

  it('timesheet: TimeLogs dated within [from, to] by date, live only, with their total', async () => {
    const self = as('Artist', artist.id);
    const march = await client.call.getTimesheet({ userId: artist.id, from: '2026-03-01', to: '2026-03-31' }, self);
    expect(ids(march.timeLogs)).toEqual([logs[0]!.id, logs[2]!.id]);
    expect(march.totalMinutes).toBe(105);
    const edges = await client.call.getTimesheet({ userId: artist.id, from: '2026-02-28', to: '2026-04-01' }, as('Supervisor'));
    expect(ids(edges.timeLogs)).toEqual([logs[1]!.id, logs[0]!.id, logs[2]!.id, logs[3]!.id]);
    expect(edges.totalMinutes).toBe(620);
    const none = await client.call.getTimesheet({ userId: artist.id, from: '2025-01-01', to: '2025-12-31' }, self);
    expect(none).toEqual({ timeLogs: [], totalMinutes: 0 });
  });

  it('the user themself, Admin, Supervisor and Coordinator may read; an Artist or Viewer reading another user is refused', async () => {
    const range = { userId: artist.id, from: '2026-03-01', to: '2026-03-31' };
    for (const ctx of [as('Artist', artist.id), as('Viewer', artist.id), as('Admin'), as('Supervisor'), as('Coordinator')]) {
      expect((await client.call.listUserTasks({ userId: artist.id }, ctx)).tasks.length).toBe(2);
      expect((await client.call.getTimesheet(range, ctx)).totalMinutes).toBe(105);
    }
    for (const ctx of [
      as('Artist', other.id),
      as('Viewer'),
      { requestId: 'g', principal: { userId: '', role: 'Guest' as const, authKind: 'guest' as const } },
    ]) {
      expect((await appErrorOf(client.call.listUserTasks({ userId: artist.id }, ctx))).kind).toBe('forbidden');
      expect((await appErrorOf(client.call.getTimesheet(range, ctx))).kind).toBe('forbidden');
    }
  });

  it('checks 403, then 422 on the query, then 404', async () => {
    const stranger = as('Artist');
    const missing = newId();
    // Refused before the dates are looked at.
    expect((await appErrorOf(client.call.getTimesheet({ userId: missing, from: 'x', to: '' }, stranger))).kind).toBe('forbidden');
    const bad = await appErrorOf(client.call.getTimesheet({ userId: missing, from: '2026-02-30', to: '' }, asAdmin));
    expect(bad.kind).toBe('invalid');
    expect(bad.problems.map((p) => p.loc)).toEqual([
      ['query', 'from'],
      ['query', 'to'],
    ]);
    const order = await appErrorOf(client.call.getTimesheet({ userId: artist.id, from: '2026-04-01', to: '2026-03-01' }, asAdmin));
    expect(order.problems).toEqual([{ loc: ['query', 'from'], msg: expect.stringContaining('after'), type: 'value_error' }]);
    const wide = await appErrorOf(client.call.getTimesheet({ userId: artist.id, from: '2025-01-01', to: '2026-01-02' }, asAdmin));
    expect(wide.problems.map((p) => p.loc)).toEqual([['query', 'from']]);
    expect((await appErrorOf(client.call.getTimesheet({ userId: missing, from: '2026-01-01', to: '2026-01-02' }, asAdmin))).kind).toBe('not_found');
    expect((await appErrorOf(client.call.listUserTasks({ userId: missing }, asAdmin))).kind).toBe('not_found');
    // A record that is not a User is no user either.
    expect((await appErrorOf(client.call.listUserTasks({ userId: tasks[0]!.id }, asAdmin))).kind).toBe('not_found');
  });

  it('a retired user: 404', async () => {
    const gone = await create('User', { name: 'Cy', email: 'cy@example.com', role: 'Artist' });
    expect((await client.call.listUserTasks({ userId: gone.id }, asAdmin)).tasks).toEqual([]);
    await retire(gone);
    expect((await appErrorOf(client.call.listUserTasks({ userId: gone.id }, asAdmin))).kind).toBe('not_found');
    expect((await appErrorOf(client.call.getTimesheet({ userId: gone.id, from: '2026-01-01', to: '2026-01-01' }, as('Artist', gone.id)))).kind).toBe(
      'not_found',
    );
  });
});

describe('plans', () => {
  /** The plan of `text` (knex `?` placeholders) with `params` bound. */
  async function plan(text: string, params: unknown[]): Promise<string> {
    let n = 0;
    const res = await sql.query<{ 'QUERY PLAN': string }>(`explain ${text.replace(/\?/g, () => `$${++n}`)}`, params);
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  it('each view is answered from its partial index once there are many records of its type', async () => {
    // 20,000 Notes, Tasks and TimeLogs each, every one linking a record or user of its own.
    const link = `jsonb_build_object('type', 'User', 'id', gen_random_uuid())`;
    await sql.query(`insert into records.record (id, entity_type, created_at, updated_at, data)
      select gen_random_uuid(), t, now(), now(),
             case t when 'Note' then jsonb_build_object('links', jsonb_build_array(${link}))
                    when 'Task' then jsonb_build_object('assignees', jsonb_build_array(${link}))
                    else jsonb_build_object('user', ${link}, 'date', (date '2026-01-01' + (i % 365))::text, 'minutes', 30) end
        from generate_series(1, 20000) i, unnest(array['Note', 'Task', 'TimeLog']) t`);
    await sql.query('analyze records.record');
    const id = newId();
    expect(await plan(NOTES_SQL, [JSON.stringify([{ type: 'Shot', id }])])).toContain('record_note_links_idx');
    expect(await plan(TASKS_SQL, [JSON.stringify([{ type: 'User', id }])])).toContain('record_task_assignees_idx');
    expect(await plan(TIMELOGS_SQL, [id, '2026-01-01', '2026-01-31'])).toContain('record_timelog_user_date_idx');
  });
});
