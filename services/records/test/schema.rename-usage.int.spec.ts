/**
 * Schema changes records cascades, against the real PostgreSQL, through two records replicas
 * sharing one database (as two pods would): each rename kind cascading and idempotent per journal
 * id, CountUsage, and ApplySchema refusing to take away a code still in use.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { appErrorOf } from '@reelbase/lib-testkit';
import pg from 'pg';
import { newId } from '@reelbase/lib-platform';
import type { SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import {
  db,
  asAdmin,
  asService,
  sql,
  a,
  b,
  applyNext,
  appliedVersion,
  snapshot,
  version,
  create,
  dataOf,
  link,
  row,
  outboxSeq,
  count,
  useSchemaReplicas,
} from './schema.world.js';

useSchemaReplicas();

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
    appliedVersion(held + 1);
    expect((await sql.query('select version from records.schema_state')).rows[0].version).toBe(String(held + 1));
    expect((await appErrorOf(create(b, 'Shot', projectId, { code: 'rm-omit' }, asAdmin, 'omit'))).kind).toBe('invalid');
  });
});
