/**
 * Records obey the schema, end to end: a custom type with one field of every type is written and
 * refused as its fields demand with no migration and no restart; a field added to a built-in type
 * is usable by the very next request; status transitions per type and role; task templates on a
 * create; and 200 rounds of "change the schema, then use the change at once".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

const MISSING = '0190a0b0-0000-7000-8000-0000000000ee';

describe('records obey the schema (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let api: Api;
  let projectId: string;
  let sequenceId: string;

  const ok = async (method: string, path: string, body?: unknown) => expectStatus(await api.call(method, path, { body }), 200, `${method} ${path}`);

  beforeAll(async () => {
    e = await startE2EStack('records-schema');
    admin = await bootstrapAdmin(e.api);
    api = admin.api;
    artist = await createUser(api, 'Artist', 'artist@studio.test');
    projectId = (await ok('POST', '/entities/Project', { data: { name: 'Obey', code: 'obey' } })).id;
    sequenceId = (await ok('POST', '/entities/Sequence', { project_id: projectId, data: { code: 'sq010' } })).id;
  });
  afterAll(async () => {
    await e?.teardown();
  });

  it('a custom type with one field of every type: records are written and refused as the fields demand, at once', async () => {
    await ok('POST', '/schema/entity-types', { code: 'Rig', name: 'Rig', project_scoped: false });
    const shot = await ok('POST', '/entities/Shot', { project_id: projectId, data: { code: 'rig_target' } });
    const fields: Array<Record<string, unknown>> = [
      { code: 'label', type: 'text', required: true },
      { code: 'joints', type: 'integer', default: 12 },
      { code: 'scale', type: 'float' },
      { code: 'rigged', type: 'boolean' },
      { code: 'due', type: 'date' },
      { code: 'published_at', type: 'datetime' },
      {
        code: 'kind',
        type: 'enum',
        options: [
          { code: 'biped', label: 'Biped' },
          { code: 'quad', label: 'Quad' },
        ],
      },
      {
        code: 'tags',
        type: 'multi_enum',
        options: [
          { code: 'hero', label: 'Hero' },
          { code: 'crowd', label: 'Crowd' },
        ],
      },
      { code: 'shot', type: 'link', link_types: ['Shot'] },
      { code: 'shots', type: 'multi_link', link_types: ['Shot'] },
      { code: 'meta', type: 'json' },
      { code: 'docs', type: 'url' },
      { code: 'tint', type: 'color' },
      { code: 'budget', type: 'duration' },
    ];
    for (const f of fields) await ok('POST', '/schema/entity-types/Rig/fields', { name: f.code, ...f });

    const good = {
      label: 'hero rig',
      scale: 1.5,
      rigged: true,
      due: '2026-12-24',
      published_at: '2026-11-23T10:00:00Z',
      kind: 'biped',
      tags: ['hero'],
      shot: { type: 'Shot', id: shot.id },
      shots: [{ type: 'Shot', id: shot.id }],
      meta: { anything: [1, 'two'] },
      docs: 'https://wiki.studio.test/rigs/hero',
      tint: '#ff8800',
      budget: 'PT4H',
    };
    const rig = await ok('POST', '/entities/Rig', { data: good });
    expect(rig).toMatchObject({ entity_type: 'Rig', project_id: null, data: { ...good, joints: 12 } });

    const usedBefore = (await ok('GET', '/schema/usage')).entity_types.Rig;
    const bad = await api.post('/entities/Rig', {
      data: {
        joints: 1.5,
        scale: 'big',
        rigged: 'yes',
        due: '2026-02-30',
        published_at: '2026-11-23',
        kind: 'snake',
        tags: ['hero', 'extra'],
        shot: { type: 'Sequence', id: sequenceId },
        shots: [{ type: 'Shot', id: MISSING }],
        docs: 'ftp://wiki',
        tint: 'orange',
        budget: 'a while',
        colour: 'red',
      },
    });
    expect(bad.status, bad.text).toBe(422);
    const locs = (bad.body.detail as Array<{ loc: unknown[] }>).map((d) => d.loc.join('.')).sort();
    expect(locs).toEqual(
      [
        'body.data.label',
        'body.data.joints',
        'body.data.scale',
        'body.data.rigged',
        'body.data.due',
        'body.data.published_at',
        'body.data.kind',
        'body.data.tags.1',
        'body.data.shot.type',
        'body.data.shots.0',
        'body.data.docs',
        'body.data.tint',
        'body.data.budget',
        'body.data.colour',
      ].sort(),
    );
    expect((await ok('GET', '/schema/usage')).entity_types.Rig).toBe(usedBefore);
    // A patch is checked key by key; a required field cannot be removed.
    expectValidation(await api.patch(`/entities/Rig/${rig.id}`, { data: { joints: 'many' } }), ['body', 'data', 'joints']);
    expectValidation(await api.patch(`/entities/Rig/${rig.id}`, { data: { label: null } }), ['body', 'data', 'label']);
    expect((await ok('PATCH', `/entities/Rig/${rig.id}`, { data: { joints: 40, kind: 'quad' } })).data).toMatchObject({ joints: 40, kind: 'quad' });
    // Types the schema does not have are not found.
    expectError(await api.post('/entities/Nothing', { data: {} }), 404, 'not_found');
  });

  it('a field added to a built-in type is usable by the very next request', async () => {
    expectValidation(await api.post('/entities/Shot', { project_id: projectId, data: { code: 'f1', lens: '35mm' } }), ['body', 'data', 'lens']);
    await ok('POST', '/schema/entity-types/Shot/fields', { code: 'lens', name: 'Lens', type: 'text' });
    const shot = await ok('POST', '/entities/Shot', {
      project_id: projectId,
      data: { code: 'f2', lens: '35mm', sequence: { type: 'Sequence', id: sequenceId } },
    });
    expect(shot.data).toMatchObject({ lens: '35mm' });
  });

  it('transitions per type and role bind Admins too; a create with a status is not a transition', async () => {
    for (const code of ['wtg', 'ip', 'fin']) await ok('POST', '/schema/statuses', { code, name: code, state: 'in_progress' });
    await ok('POST', '/schema/transitions', {
      entity_type: 'Shot',
      transitions: [
        { from: 'wtg', to: ['ip'], roles: ['Artist'] },
        { from: 'ip', to: ['fin'] },
      ],
    });
    expect((await ok('POST', '/entities/Shot', { project_id: projectId, status: 'fin', data: { code: 't0' } })).status).toBe('fin');
    const shot = await ok('POST', '/entities/Shot', { project_id: projectId, status: 'wtg', data: { code: 't1' } });
    const path = `/entities/Shot/${shot.id}`;
    expectError(await api.patch(path, { status: 'ip' }), 409, 'transition_not_allowed');
    expectError(await api.patch(path, { status: 'fin' }), 409, 'transition_not_allowed');
    expect(expectStatus(await artist.api.patch(path, { status: 'ip' }), 200, 'Artist wtg → ip').status).toBe('ip');
    expect((await ok('PATCH', path, { status: 'fin' })).status).toBe('fin');
    expectError(await artist.api.patch(path, { status: 'wtg' }), 409, 'transition_not_allowed');
    // Assets have no transitions: every change is allowed.
    const asset = await ok('POST', '/entities/Asset', { project_id: projectId, status: 'fin', data: { code: 'a1' } });
    expect((await ok('PATCH', `/entities/Asset/${asset.id}`, { status: 'wtg' })).status).toBe('wtg');
    // "transitions": [] allows every change again.
    await ok('POST', '/schema/transitions', { entity_type: 'Shot', transitions: [] });
    expect(expectStatus(await artist.api.patch(path, { status: 'wtg' }), 200, 'fin → wtg once transitions are cleared').status).toBe('wtg');
  });

  it('task_template on a Shot create makes its tasks in the same write, one event each; an unknown one is 422', async () => {
    await ok('POST', '/schema/steps', { code: 'anim', name: 'Animation' });
    await ok('POST', '/schema/steps', { code: 'comp', name: 'Compositing' });
    await ok('PUT', '/schema/task-templates', {
      templates: [
        {
          code: 'shot_std',
          name: 'Standard shot',
          entity_type: 'Shot',
          tasks: [
            { name: 'Animation', step: 'anim', estimate_minutes: 480 },
            { name: 'Comp', step: 'comp' },
          ],
        },
      ],
    });
    const start = await lastEventId(api);
    const shot = await ok('POST', '/entities/Shot', { project_id: projectId, data: { code: 'tpl010' }, task_template: 'shot_std' });
    const tasks = await eventually(async () => {
      const items = (await eventsAfter(api, start)).filter((ev) => ev.entity_type === 'Task');
      return items.length >= 2 ? items : undefined;
    });
    expect(tasks.map((ev) => ev.changes)).toEqual([
      expect.objectContaining({ name: 'Animation', step: 'anim', estimate_minutes: 480, entity: { type: 'Shot', id: shot.id }, project_id: projectId }),
      expect.objectContaining({ name: 'Comp', step: 'comp', entity: { type: 'Shot', id: shot.id } }),
    ]);
    for (const ev of tasks) expect(expectStatus(await api.get(`/entities/Task/${ev.entity_id}`), 200).data.step).toEqual(ev.changes.step);
    expectValidation(await api.post('/entities/Shot', { project_id: projectId, data: { code: 'tpl020' }, task_template: 'nope' }), ['body', 'task_template']);
    expectValidation(await api.post('/entities/Shot', { project_id: projectId, data: { code: 'tpl030' }, task_template: 7 }), ['body', 'task_template']);
  });

  it('200 rounds of "change the schema, then use the change at once" never see the old definition', async () => {
    await ok('POST', '/schema/entity-types/Shot/fields', { code: 'grade', name: 'Grade', type: 'enum', options: [{ code: 'u0', label: 'u0' }] });
    const used = ['u0'];
    const wrong: string[] = [];
    for (let i = 1; i <= 200; i++) {
      // Add u<i> (to use) and r<i> (never used), drop r<i-1>: options in use cannot be dropped.
      used.push(`u${i}`);
      const options = [...used, `r${i}`].map((code) => ({ code, label: code }));
      await ok('PATCH', '/schema/entity-types/Shot/fields/grade', { options });
      const added = await api.post('/entities/Shot', { project_id: projectId, data: { code: `g${i}`, grade: `u${i}` } });
      if (added.status !== 200) wrong.push(`round ${i}: the option just added was refused: ${added.status} ${added.text}`);
      if (i > 1) {
        const dropped = await api.post('/entities/Shot', { project_id: projectId, data: { code: `d${i}`, grade: `r${i - 1}` } });
        if (dropped.status !== 422) wrong.push(`round ${i}: the option just removed was accepted: ${dropped.status}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
