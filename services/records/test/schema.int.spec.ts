/**
 * Records obeying the schema, against the real PostgreSQL, through two records replicas sharing
 * one database (as two pods would): ApplySchema, writes refused and accepted, read-your-schema
 * over 200 rounds of "change the schema through one replica, use the change through the other",
 * each rename kind cascading and idempotent per journal id, and CountUsage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf, createTestDatabase, deleteStreams, uniquePrefix, type TestDatabase } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import type { SchemaSnapshot, SnapshotEntityType } from '../src/kernel/domain/schema.snapshot.js';
import type { RunningRecords } from '../src/service.js';
import { startRecordsReplica } from './records.world.js';
import { StreamReader } from './stream.helper.js';

type Client = GrpcClient<recordsv1.RecordsServiceClient>;

const asAdmin: CallContext = { requestId: 'r-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const asArtist: CallContext = { requestId: 'r-artist', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };
const asService: CallContext = { requestId: 'r-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };

let db: TestDatabase;
let prefix: string;
let sql: pg.Client;
const replicas: RunningRecords[] = [];
const clients: Client[] = [];
let a: Client;
let b: Client;

beforeAll(async () => {
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

const text = (code: string) => ({ code, type: 'text' as const });

/** A schema like the seeded one, with a custom `Gadget` whose `size` options vary. */
function snapshot(version: number, sizes: string[] = ['small', 'large'], extra: Partial<SchemaSnapshot> = {}): SchemaSnapshot {
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

let version = 0;
/** Applies the next snapshot through `via` and returns its version. */
async function applyNext(via: Client, sizes?: string[], extra?: Partial<SchemaSnapshot>): Promise<number> {
  version += 1;
  await via.call.applySchema({ version, snapshotJson: JSON.stringify(snapshot(version, sizes, extra)) }, asService);
  return version;
}

const create = (via: Client, entityType: string, projectId: string | undefined, data: Record<string, unknown>, ctx = asAdmin, status?: string) =>
  via.call.createRecord({ entityType, projectId, status, dataJson: JSON.stringify(data) }, ctx).then((r) => r.record!);
const dataOf = (r: recordsv1.Record) => JSON.parse(r.dataJson) as Record<string, unknown>;
const link = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });

async function row(id: string): Promise<{ entity_type: string; status: string | null; data: Record<string, unknown>; updated_at: Date }> {
  const res = await sql.query('select entity_type, status, data, updated_at from records.record where id = $1', [id]);
  return res.rows[0];
}

/** The last outbox sequence number handed out (rows are deleted once published; the sequence is not). */
async function outboxSeq(): Promise<string> {
  return (await sql.query('select last_value::text as v from records.outbox_seq_seq')).rows[0].v;
}

async function count(where: string): Promise<number> {
  return (await sql.query(`select count(*)::int as n from records.record where ${where}`)).rows[0].n;
}

describe('before any schema (version 0)', () => {
  it('accepts types and data as given', async () => {
    const r = await create(a, 'Anything', undefined, { whatever: 1 });
    expect(dataOf(r)).toEqual({ whatever: 1 });
  });
});

describe('ApplySchema', () => {
  it('is for services only and keeps only a newer version', async () => {
    expect((await appErrorOf(a.call.applySchema({ version: 1, snapshotJson: '{}' }, asAdmin))).kind).toBe('forbidden');
    const bad = await appErrorOf(a.call.applySchema({ version: 0, snapshotJson: '[' }, asService));
    expect(bad.problems.map((p) => p.loc.join('.')).sort()).toEqual(['snapshot_json', 'version']);
    await applyNext(a, ['small']);
    await applyNext(a, ['small', 'large']);
    // An older snapshot arriving late changes nothing.
    await a.call.applySchema({ version: 1, snapshotJson: JSON.stringify(snapshot(1, ['tiny'])) }, asService);
    const stored = await sql.query('select version, snapshot from records.schema_state');
    expect(stored.rows).toHaveLength(1);
    expect(Number(stored.rows[0].version)).toBe(version);
  });
});

describe('writes obey the applied schema', () => {
  let projectId: string;
  let shot: recordsv1.Record;
  beforeAll(async () => {
    await applyNext(a);
    projectId = (await create(a, 'Project', undefined, { name: 'Obey', code: 'obey' })).id;
    shot = await create(a, 'Shot', projectId, { code: 'sh010' });
  });

  it('refuses every problem of a create at once, and writes nothing', async () => {
    const before = await sql.query('select count(*)::int as n from records.record');
    const err = await appErrorOf(
      b.call.createRecord(
        {
          entityType: 'Gadget',
          status: 'omit',
          dataJson: JSON.stringify({ size: 'huge', colour: 'red', shot: { type: 'Sequence', id: shot.id }, site: 'ftp://x' }),
        },
        asAdmin,
      ),
    );
    expect(err.kind).toBe('invalid');
    expect(err.problems.map((p) => p.loc.join('.')).sort()).toEqual(
      ['data.colour', 'data.serial', 'data.shot.type', 'data.site', 'data.size', 'project_id', 'status'].sort(),
    );
    const after = await sql.query('select count(*)::int as n from records.record');
    expect(after.rows[0].n).toBe(before.rows[0].n);
    expect((await appErrorOf(b.call.createRecord({ entityType: 'Widget', dataJson: '{}' }, asAdmin))).kind).toBe('not_found');
  });

  it('accepts a valid create with defaults, and checks link targets in the write', async () => {
    const g = await create(b, 'Gadget', projectId, { serial: 'g1', size: 'small', tags: ['red'], shot: link(shot), shots: [link(shot)] }, asArtist);
    expect(dataOf(g)).toEqual({ serial: 'g1', size: 'small', tags: ['red'], shot: link(shot), shots: [link(shot)], grade: 'B' });
    const missing = { type: 'Shot', id: newId() };
    let err = await appErrorOf(create(b, 'Gadget', projectId, { serial: 'g2', shots: [link(shot), missing] }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'shots', 1], type: 'link_not_found' })]);
    // A record of another type with that id is no target either.
    err = await appErrorOf(create(b, 'Gadget', projectId, { serial: 'g3', shot: { type: 'Shot', id: projectId } }));
    expect(err.problems).toEqual([expect.objectContaining({ loc: ['data', 'shot'], type: 'link_not_found' })]);
    const retired = await create(a, 'Shot', projectId, { code: 'gone' });
    await a.call.retireRecord({ entityType: 'Shot', id: retired.id }, asAdmin);
    err = await appErrorOf(create(b, 'Gadget', projectId, { serial: 'g4', shot: link(retired) }));
    expect(err.problems[0]).toMatchObject({ loc: ['data', 'shot'], type: 'link_not_found' });
    err = await appErrorOf(b.call.updateRecord({ entityType: 'Gadget', id: g.id, dataJson: JSON.stringify({ shot: link(retired), size: 'xl' }) }, asAdmin));
    expect(err.problems.map((p) => p.loc.join('.'))).toEqual(['data.size', 'data.shot']);
    err = await appErrorOf(b.call.updateRecord({ entityType: 'Gadget', id: g.id, dataJson: JSON.stringify({ shot: link(retired) }) }, asAdmin));
    expect(err.problems[0]).toMatchObject({ loc: ['data', 'shot'], type: 'link_not_found' });
    const patched = await b.call.updateRecord({ entityType: 'Gadget', id: g.id, dataJson: JSON.stringify({ size: 'large', serial: 'g1b' }) }, asAdmin);
    expect(dataOf(patched.record!)).toMatchObject({ size: 'large', serial: 'g1b' });
  });

  it('Task step and priority must be codes; transitions bind every role', async () => {
    const err = await appErrorOf(create(a, 'Task', projectId, { name: 't', step: 'lighting', priority: 'urgent' }));
    expect(err.problems.map((p) => p.loc.join('.')).sort()).toEqual(['data.priority', 'data.step']);
    await applyNext(a, undefined, {
      transitions: {
        Shot: [
          { from: 'wtg', to: ['ip'] },
          { from: 'ip', to: ['fin'], roles: ['Supervisor'] },
        ],
      },
    });
    const s = await create(a, 'Shot', projectId, { code: 'tr' }, asAdmin, 'wtg');
    expect((await appErrorOf(b.call.updateRecord({ entityType: 'Shot', id: s.id, status: { value: 'fin' } }, asAdmin))).code).toBe('transition_not_allowed');
    await b.call.updateRecord({ entityType: 'Shot', id: s.id, status: { value: 'ip' } }, asArtist);
    expect((await appErrorOf(b.call.updateRecord({ entityType: 'Shot', id: s.id, status: { value: 'fin' } }, asAdmin))).code).toBe('transition_not_allowed');
    const supervisor: CallContext = { requestId: 'r-sup', principal: { userId: newId(), role: 'Supervisor', authKind: 'token' } };
    expect((await b.call.updateRecord({ entityType: 'Shot', id: s.id, status: { value: 'fin' } }, supervisor)).record!.status).toBe('fin');
    // `[]` allows every change again.
    await applyNext(a, undefined, { transitions: { Shot: [] } });
    expect((await b.call.updateRecord({ entityType: 'Shot', id: s.id, status: { value: 'wtg' } }, asArtist)).record!.status).toBe('wtg');
  });

  it('task_template creates the tasks in the same transaction; an unknown one writes nothing', async () => {
    await applyNext(a, undefined, {
      task_templates: [
        {
          code: 'std',
          entity_type: 'Shot',
          tasks: [
            { name: 'Anim', step: 'anim', estimate_minutes: 60 },
            { name: 'Comp', step: 'comp' },
          ],
        },
      ],
    });
    const s = (await b.call.createRecord({ entityType: 'Shot', projectId, dataJson: '{"code":"tpl"}', taskTemplate: 'std' }, asArtist)).record!;
    const tasks = await sql.query(`select data from records.record where entity_type = 'Task' and data->'entity'->>'id' = $1 order by data->>'name'`, [s.id]);
    expect(tasks.rows.map((r) => r.data)).toEqual([
      { name: 'Anim', step: 'anim', entity: { type: 'Shot', id: s.id }, estimate_minutes: 60 },
      { name: 'Comp', step: 'comp', entity: { type: 'Shot', id: s.id } },
    ]);
    // One event each, as the relay published them (the outbox itself is emptied as it publishes).
    const stream = await StreamReader.open(prefix);
    try {
      const ours = async () =>
        (await stream.all()).filter((e) => e.payload.entity_id === s.id || (e.payload.changes.entity as { id?: string } | undefined)?.id === s.id);
      const deadline = Date.now() + 10_000;
      while ((await ours()).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      expect((await ours()).map((e) => `${e.payload.entity_type} ${e.payload.action}`).sort()).toEqual(['Shot create', 'Task create', 'Task create']);
    } finally {
      await stream.close();
    }
    const err = await appErrorOf(b.call.createRecord({ entityType: 'Shot', projectId, dataJson: '{"code":"tpl2"}', taskTemplate: 'nope' }, asArtist));
    expect(err.problems[0]!.loc).toEqual(['task_template']);
    const none = await sql.query(`select count(*)::int as n from records.record where data->>'code' = 'tpl2'`);
    expect(none.rows[0].n).toBe(0);
  });
});

describe('read-your-schema with two replicas', () => {
  it('200 rounds of "change the schema via one replica, use it at once via the other" never see the old definition', async () => {
    const projectId = (await create(a, 'Project', undefined, { name: 'Rounds', code: 'rounds' })).id;
    const g = await create(b, 'Gadget', projectId, { serial: 'round-0', size: 'small' });
    const wrong: string[] = [];
    for (let i = 1; i <= 200; i++) {
      // Alternate which replica applies, so both caches keep going stale.
      const [applier, user] = i % 2 === 0 ? [a, b] : [b, a];
      await applyNext(applier, [`opt${i}`, 'small']);
      // The option added a moment ago is accepted, by a create and by a patch.
      const made = await create(user, 'Gadget', projectId, { serial: `r${i}`, size: `opt${i}` }).catch((err) => {
        wrong.push(`round ${i}: new option refused on create: ${String(err)}`);
      });
      await user.call.updateRecord({ entityType: 'Gadget', id: g.id, dataJson: JSON.stringify({ size: `opt${i}` }) }, asAdmin).catch((err) => {
        wrong.push(`round ${i}: new option refused on patch: ${String(err)}`);
      });
      // The option removed a moment ago is refused.
      if (i > 1) {
        const err = await appErrorOf(create(user, 'Gadget', projectId, { serial: `x${i}`, size: `opt${i - 1}` })).catch(() => undefined);
        if (err?.kind !== 'invalid') wrong.push(`round ${i}: removed option opt${i - 1} was accepted`);
      }
      if (made && i % 50 === 0) expect(dataOf(made).size).toBe(`opt${i}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('ApplyRename', () => {
  let projectId: string;
  beforeAll(async () => {
    await applyNext(a);
    projectId = (
      await create(a, 'Project', undefined, {
        name: 'Ren',
        code: 'ren',
        overrides: { applicationsByStep: { anim: ['maya'] }, toolsByStep: { anim: ['mtoa/5.4'], comp: [] } },
      })
    ).id;
  });
  const rename = (journalId: string, kind: string, from: string, to: string, entityType = '', field = '') =>
    a.call.applyRename({ journalId, kind, from, to, entityType, field }, asService).then((r) => r.rewritten);

  it('status: every record, retired ones too, plus Presets; idempotent per journal id', async () => {
    const s1 = await create(a, 'Shot', projectId, { code: 's1' }, asAdmin, 'ip');
    const s2 = await create(a, 'Shot', projectId, { code: 's2' }, asAdmin, 'ip');
    await a.call.retireRecord({ entityType: 'Shot', id: s2.id }, asAdmin);
    const preset = await create(a, 'Preset', undefined, {
      name: 'in progress',
      target_type: 'Shot',
      filters: [['status', 'in', ['ip', 'wtg']], ['code', 'is', 'ip'], { filter_operator: 'any', filters: [['status', 'is', 'ip']] }],
    });
    const journal = newId();
    const outboxBefore = await outboxSeq();
    expect(await rename(journal, 'status', 'ip', 'in_progress')).toBe(3);
    // No per-record events: nothing was appended to the outbox.
    expect(await outboxSeq()).toBe(outboxBefore);
    expect((await row(s1.id)).status).toBe('in_progress');
    expect((await row(s2.id)).status).toBe('in_progress');
    expect((await row(preset.id)).data.filters).toEqual([
      ['status', 'in', ['in_progress', 'wtg']],
      ['code', 'is', 'ip'],
      { filter_operator: 'any', filters: [['status', 'is', 'in_progress']] },
    ]);
    const stamp = (await row(s1.id)).updated_at;
    expect(await rename(journal, 'status', 'ip', 'in_progress')).toBe(3);
    expect((await row(s1.id)).updated_at).toEqual(stamp);
    const left = await sql.query(`select count(*)::int as n from records.record where status = 'ip'`);
    expect(left.rows[0].n).toBe(0);
  });

  it('step: Task data.step, project per-step overrides and Presets', async () => {
    const t = await create(a, 'Task', projectId, { name: 'a', step: 'anim' });
    const other = await create(a, 'Task', projectId, { name: 'b', step: 'comp' });
    const preset = await create(a, 'Preset', undefined, { name: 'p', target_type: 'Task', filters: [['step', 'is', 'anim']] });
    const tasks = await count(`entity_type = 'Task' and data->>'step' = 'anim'`);
    expect(tasks).toBeGreaterThanOrEqual(1);
    // The tasks, the project's overrides and the preset.
    expect(await rename(newId(), 'step', 'anim', 'animation')).toBe(tasks + 2);
    expect(await count(`data::text like '%"anim"%'`)).toBe(0);
    expect((await row(t.id)).data.step).toBe('animation');
    expect((await row(other.id)).data.step).toBe('comp');
    expect((await row(projectId)).data.overrides).toEqual({ applicationsByStep: { animation: ['maya'] }, toolsByStep: { animation: ['mtoa/5.4'], comp: [] } });
    expect((await row(preset.id)).data.filters).toEqual([['step', 'is', 'animation']]);
  });

  it('priority: data.priority of every record storing it', async () => {
    const t = await create(a, 'Task', projectId, { name: 'p', step: 'comp', priority: 'high' });
    expect(await rename(newId(), 'priority', 'high', 'urgent')).toBe(1);
    expect((await row(t.id)).data.priority).toBe('urgent');
  });

  it('option: the enum and multi_enum values of that field of that type only', async () => {
    const g1 = await create(a, 'Gadget', projectId, { serial: 'o1', size: 'small', tags: ['red', 'blue'] });
    const g2 = await create(a, 'Gadget', projectId, { serial: 'o2', size: 'large', tags: ['blue'] });
    const preset = await create(a, 'Preset', undefined, { name: 'small ones', target_type: 'Gadget', filters: [['size', 'is', 'small']] });
    expect(await rename(newId(), 'option', 'small', 'compact', 'Gadget', 'size')).toBe(2);
    expect((await row(g1.id)).data.size).toBe('compact');
    expect((await row(g2.id)).data.size).toBe('large');
    expect((await row(preset.id)).data.filters).toEqual([['size', 'is', 'compact']]);
    const reds = await count(`entity_type = 'Gadget' and data->'tags' @> '["red"]'`);
    expect(reds).toBeGreaterThanOrEqual(1);
    expect(await rename(newId(), 'option', 'red', 'crimson', 'Gadget', 'tags')).toBe(reds);
    expect(await count(`entity_type = 'Gadget' and data->'tags' @> '["red"]'`)).toBe(0);
    expect((await row(g1.id)).data.tags).toEqual(['crimson', 'blue']);
    expect((await row(g2.id)).data.tags).toEqual(['blue']);
  });

  it('entity_type: the type column, every link {type} in data, and Presets', async () => {
    const seq = await create(a, 'Sequence', projectId, { code: 'sq1' });
    const shot = await create(a, 'Shot', projectId, { code: 'lk', sequence: link(seq) });
    const gadget = await create(a, 'Gadget', projectId, { serial: 'lk', shots: [link(shot)], shot: link(shot) });
    const preset = await create(a, 'Preset', undefined, {
      name: 'seq',
      target_type: 'Sequence',
      filters: [
        ['code', 'is', 'Sequence'],
        ['entity_type', 'is', 'Sequence'],
      ],
      fields: ['code'],
    });
    const preset2 = await create(a, 'Preset', undefined, {
      name: 'shots by seq',
      target_type: 'Shot',
      filters: [
        ['sequence.Sequence.code', 'is', 'sq1'],
        ['sequence', 'type_is', 'Sequence'],
      ],
    });
    const journal = newId();
    const n = await rename(journal, 'entity_type', 'Sequence', 'Sequence2');
    expect(n).toBe(4);
    expect((await row(seq.id)).entity_type).toBe('Sequence2');
    expect((await row(shot.id)).data.sequence).toEqual({ type: 'Sequence2', id: seq.id });
    expect((await row(gadget.id)).data).toMatchObject({ shots: [link(shot)], shot: link(shot) });
    expect((await row(preset.id)).data).toMatchObject({
      target_type: 'Sequence2',
      filters: [
        ['code', 'is', 'Sequence'],
        ['entity_type', 'is', 'Sequence2'],
      ],
    });
    expect((await row(preset2.id)).data.filters).toEqual([
      ['sequence.Sequence2.code', 'is', 'sq1'],
      ['sequence', 'type_is', 'Sequence2'],
    ]);
    expect(await rename(journal, 'entity_type', 'Sequence', 'Sequence2')).toBe(4);
    const left = await sql.query(`select count(*)::int as n from records.record where entity_type = 'Sequence' or data::text like '%"type": "Sequence"%'`);
    expect(left.rows[0].n).toBe(0);
  });

  it('waits for writes in flight (they hold the schema lock shared) and rewrites them too; writes wait for a cascade', async () => {
    const inflight = new pg.Client({ connectionString: db.url });
    await inflight.connect();
    try {
      // A write validated against the old definition, still in its transaction when the cascade starts.
      await inflight.query('begin');
      await inflight.query(`select pg_advisory_xact_lock_shared(hashtext('records:schema'))`);
      const id = newId();
      await inflight.query(
        `insert into records.record (id, entity_type, project_id, status, created_at, updated_at, data)
         values ($1, 'Shot', $2, 'late', now(), now(), '{"code":"late"}')`,
        [id, projectId],
      );
      let answered = false;
      const renamed = rename(newId(), 'status', 'late', 'later').then((n) => {
        answered = true;
        return n;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toBe(false);
      await inflight.query('commit');
      expect(await renamed).toBe(1);
      expect((await row(id)).status).toBe('later');

      // While a cascade holds the lock, a create waits for it.
      await inflight.query('begin');
      await inflight.query(`select pg_advisory_xact_lock(hashtext('records:schema'))`);
      let created = false;
      const write = create(b, 'Shot', projectId, { code: 'waits' }).then((r) => {
        created = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(created).toBe(false);
      await inflight.query('commit');
      expect(dataOf(await write).code).toBe('waits');
    } finally {
      await inflight.end();
    }
  });

  it('refuses a malformed rename and non-service callers', async () => {
    expect((await appErrorOf(a.call.applyRename({ journalId: '', kind: 'colour', from: 'a', to: 'b', entityType: '', field: '' }, asService))).kind).toBe(
      'invalid',
    );
    expect((await appErrorOf(a.call.applyRename({ journalId: 'j', kind: 'status', from: 'a', to: 'b', entityType: '', field: '' }, asAdmin))).kind).toBe(
      'forbidden',
    );
  });
});

describe('CountUsage', () => {
  it('counts types, fields, statuses (also per type), steps, priorities and options, retired records included', async () => {
    const projectId = (await create(a, 'Project', undefined, { name: 'Use', code: 'use' })).id;
    const g = await create(a, 'Gadget', projectId, { serial: 'u1', size: 'large', tags: ['blue'] }, asAdmin, 'wtg');
    await a.call.retireRecord({ entityType: 'Gadget', id: g.id }, asAdmin);
    const usage = JSON.parse((await b.call.countUsage({}, asService)).usageJson);
    const expected = await sql.query(`select
        count(*) filter (where entity_type = 'Gadget')::int as gadgets,
        count(*) filter (where entity_type = 'Gadget' and data ? 'size')::int as sizes,
        count(*) filter (where status = 'wtg')::int as wtg,
        count(*) filter (where entity_type = 'Gadget' and status = 'wtg')::int as gadget_wtg,
        count(*) filter (where entity_type = 'Task' and data->>'step' = 'comp')::int as comp,
        count(*) filter (where entity_type = 'Gadget' and data->>'size' = 'large')::int as large,
        count(*) filter (where entity_type = 'Gadget' and data->'tags' ? 'blue')::int as blue
      from records.record`);
    const e = expected.rows[0];
    expect(usage.entity_types.Gadget).toBe(e.gadgets);
    expect(usage.fields['Gadget.size']).toBe(e.sizes);
    expect(usage.statuses.wtg).toBe(e.wtg);
    expect(usage.steps.comp).toBe(e.comp);
    expect(usage.options['Gadget.size.large']).toBe(e.large);
    expect(usage.options['Gadget.tags.blue']).toBe(e.blue);
    expect(usage.status_types['Gadget.wtg']).toBe(e.gadget_wtg);
    expect(Object.keys(usage).sort()).toEqual(['entity_types', 'fields', 'options', 'priorities', 'status_types', 'statuses', 'steps']);
    expect(e.gadgets).toBeGreaterThan(0);
  });
});

describe('ApplySchema with refuse_removed_in_use (a schema delete)', () => {
  it('refuses a snapshot taking away a code in use, each kind counted as CountUsage counts it; stores one that removes only unused codes', async () => {
    const projectId = (await create(a, 'Project', undefined, { name: 'Removals', code: 'rm' })).id;
    await create(a, 'Gadget', projectId, { serial: 'rm1', size: 'large', tags: ['blue'] }, asAdmin, 'wtg');
    await create(a, 'Task', projectId, { name: 'rm task', step: 'comp', priority: 'high' });
    const usage = JSON.parse((await b.call.countUsage({}, asService)).usageJson);
    const held = version;
    const without = (edit: (s: SchemaSnapshot) => void) => {
      const s = snapshot(held + 1);
      edit(s);
      return JSON.stringify(s);
    };
    const gadget = (s: SchemaSnapshot) => s.entity_types.find((t) => t.code === 'Gadget')!;
    const cases: [string, number, string][] = [
      [
        'option Gadget.size.large',
        usage.options['Gadget.size.large'],
        without((s) => (gadget(s).fields.find((f) => f.code === 'size')!.options = [{ code: 'small' }])),
      ],
      [
        'option Gadget.tags.blue',
        usage.options['Gadget.tags.blue'],
        without((s) => (gadget(s).fields.find((f) => f.code === 'tags')!.options = [{ code: 'red' }])),
      ],
      ['field Gadget.size', usage.fields['Gadget.size'], without((s) => (gadget(s).fields = gadget(s).fields.filter((f) => f.code !== 'size')))],
      ['entity type Gadget', usage.entity_types.Gadget, without((s) => (s.entity_types = s.entity_types.filter((t) => t.code !== 'Gadget')))],
      ['status wtg', usage.statuses.wtg, without((s) => (s.statuses = s.statuses.filter((x) => x.code !== 'wtg')))],
      ['status wtg (Gadget)', usage.status_types['Gadget.wtg'], without((s) => (s.statuses.find((x) => x.code === 'wtg')!.entity_types = ['Shot', 'Task']))],
      ['step comp', usage.steps.comp, without((s) => (s.steps = [{ code: 'anim' }]))],
      ['priority high', usage.priorities.high, without((s) => (s.priorities = [{ code: 'low' }]))],
    ];
    for (const [what, n, snapshotJson] of cases) {
      expect(n, what).toBeGreaterThan(0);
      const err = await appErrorOf(a.call.applySchema({ version: held + 1, snapshotJson, refuseRemovedInUse: true }, asService));
      expect(err, what).toMatchObject({ kind: 'conflict', code: 'code_in_use', extra: { usage: n } });
      expect(err.message, what).toBe(`${what} is still used by ${n} record${n === 1 ? '' : 's'}`);
    }
    expect((await sql.query('select version from records.schema_state')).rows[0].version).toBe(String(held));
    // Removing only what no record uses is stored (and writes see it at once).
    const unused = without((s) => (s.statuses = s.statuses.filter((x) => x.code !== 'omit')));
    await a.call.applySchema({ version: held + 1, snapshotJson: unused, refuseRemovedInUse: true }, asService);
    version = held + 1;
    expect((await sql.query('select version from records.schema_state')).rows[0].version).toBe(String(held + 1));
    expect((await appErrorOf(create(b, 'Shot', projectId, { code: 'rm-omit' }, asAdmin, 'omit'))).kind).toBe('invalid');
  });
});
