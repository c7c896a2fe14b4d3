/**
 * Records obeying the schema, against the real PostgreSQL, through two records replicas sharing
 * one database (as two pods would): ApplySchema, writes refused and accepted, and read-your-schema
 * over 200 rounds of "change the schema through one replica, use the change through the other".
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { appErrorOf } from '@reelbase/lib-testkit';
import { newId, type CallContext } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import { StreamReader } from './stream.helper.js';
import { asAdmin, asArtist, asService, sql, a, b, prefix, applyNext, snapshot, version, create, dataOf, link, useSchemaReplicas } from './schema.world.js';

useSchemaReplicas();

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
