/**
 * Sync through the gateway against the whole stack (docs/api-notes.md, "Sync"): a ShotGrid-shaped
 * production imported with links by external id in any order and across batches; re-import of
 * unchanged items writes no event; a bad item anywhere rejects the batch with nothing written; dry
 * runs; mappings both ways; the changes feed (paging with `next_after`, records only, no echo of a
 * source's own imports, null once retired, external ids attached); actor = the importing user; roles.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

/** A small production as ShotGrid exports it, linked by ShotGrid ids, deliberately out of order. */
const PRODUCTION = [
  {
    external_id: '5001',
    entity_type: 'Task',
    project_external_id: '70',
    data: { name: 'comp', step: 'comp', entity: { type: 'Shot', external_id: '1101' }, assignees: [{ type: 'User', external_id: '42' }] },
  },
  {
    external_id: '9001',
    entity_type: 'Note',
    project_external_id: '70',
    data: {
      subject: 'edge',
      content: 'fix the edge',
      links: [
        { type: 'Version', external_id: '8001' },
        { type: 'Shot', external_id: '1101' },
      ],
    },
  },
  {
    external_id: '8001',
    entity_type: 'Version',
    project_external_id: '70',
    data: { code: 'sh010_comp_v001', entity: { type: 'Shot', external_id: '1101' }, task: { type: 'Task', external_id: '5001' } },
  },
  {
    external_id: '1101',
    entity_type: 'Shot',
    project_external_id: '70',
    status: 'wtg',
    data: { code: 'sh010', cut_in: 1001, cut_out: 1100, sequence: { type: 'Sequence', external_id: '301' } },
  },
  {
    external_id: '1102',
    entity_type: 'Shot',
    project_external_id: '70',
    status: 'wtg',
    data: { code: 'sh020', sequence: { type: 'Sequence', external_id: '301' } },
  },
  { external_id: '301', entity_type: 'Sequence', project_external_id: '70', data: { code: 'sq01' } },
  { external_id: '42', entity_type: 'User', data: { name: 'Ann Artist', email: 'ann@shotgrid.test', role: 'Artist' } },
  { external_id: '70', entity_type: 'Project', data: { name: 'Pilot', code: 'pilot' } },
];

describe('sync (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let sup: Session;
  let artist: Session;
  let start = 0;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    e = await startE2EStack('sync');
    admin = await bootstrapAdmin(e.api);
    sup = await createUser(admin.api, 'Supervisor', 'sup@sync.test');
    artist = await createUser(admin.api, 'Artist', 'art@sync.test');
    for (const code of ['wtg', 'ip', 'fin']) expectStatus(await admin.api.post('/schema/statuses', { code, name: code, state: 'not_started' }), 200);
    expectStatus(await admin.api.post('/schema/steps', { code: 'comp', name: 'Comp' }), 200);
    expectStatus(
      await admin.api.post('/schema/transitions', {
        entity_type: 'Shot',
        transitions: [
          { from: 'wtg', to: ['ip'] },
          { from: 'ip', to: ['fin'] },
        ],
      }),
      200,
    );
    start = await lastEventId(admin.api);
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  it('imports only for Admin', async () => {
    expectError(await sup.api.post('/sync/import', { source: 'sg', items: PRODUCTION }), 403, 'forbidden');
    expectError(await artist.api.post('/sync/import', { source: 'sg', items: PRODUCTION }), 403, 'forbidden');
  });

  it('imports a production with links by external id in any order; each record one event by the importing user', async () => {
    const res = expectStatus(await admin.api.post('/sync/import', { source: 'sg', items: PRODUCTION }), 200);
    expect(res).toMatchObject({ created: 8, updated: 0, unchanged: 0 });
    for (const item of res.items) ids[`${item.entity_type}:${item.external_id}`] = item.id;
    const task = expectStatus(await admin.api.get(`/entities/Task/${ids['Task:5001']}`), 200);
    expect(task).toMatchObject({ project_id: ids['Project:70'], created_by: admin.user.id });
    expect(task.data).toMatchObject({ entity: { type: 'Shot', id: ids['Shot:1101'] }, assignees: [{ type: 'User', id: ids['User:42'] }] });
    const note = expectStatus(await admin.api.get(`/entities/Note/${ids['Note:9001']}`), 200);
    expect(note.data.links).toEqual([
      { type: 'Version', id: ids['Version:8001'] },
      { type: 'Shot', id: ids['Shot:1101'] },
    ]);
    expect(note.data.author).toEqual({ type: 'User', id: admin.user.id });
    const events = await eventually(async () => {
      const list = await eventsAfter(admin.api, start);
      return list.length >= 8 ? list : undefined;
    });
    expect(events.map((ev) => ev.entity_id).sort()).toEqual(Object.values(ids).sort());
    expect(events.every((ev) => ev.action === 'create' && ev.actor === admin.user.id)).toBe(true);
  });

  it('links against records of earlier batches; an unchanged re-import writes no event', async () => {
    const later = expectStatus(
      await admin.api.post('/sync/import', {
        source: 'sg',
        items: [
          { external_id: '1103', entity_type: 'Shot', project_external_id: '70', data: { code: 'sh030', sequence: { type: 'Sequence', external_id: '301' } } },
        ],
      }),
      200,
    );
    ids['Shot:1103'] = later.items[0].id;
    expect(expectStatus(await admin.api.get(`/entities/Shot/${ids['Shot:1103']}`), 200).data.sequence).toEqual({ type: 'Sequence', id: ids['Sequence:301'] });
    // The last event of the one list that holds all nine (an id read apart could be older than the ninth).
    const before = await eventually(async () => {
      const list = await eventsAfter(admin.api, start);
      return list.length >= 9 ? (list.at(-1).id as number) : undefined;
    });
    const again = expectStatus(await admin.api.post('/sync/import', { source: 'sg', items: PRODUCTION }), 200);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 8 });
    expect(again.items.map((i: { id: string }) => i.id)).toEqual(PRODUCTION.map((p) => ids[`${p.entity_type}:${p.external_id}`]));
    // A marker write after it: once its event is in the log, nothing of the re-import is before it.
    const marker = expectStatus(await admin.api.post('/entities/Sequence', { project_id: ids['Project:70'], data: { code: 'marker' } }), 200);
    const after = await eventually(async () => {
      const list = await eventsAfter(admin.api, before);
      return list.some((ev) => ev.entity_id === marker.id) ? list : undefined;
    });
    expect(after.map((ev) => ev.entity_id)).toEqual([marker.id]);
  });

  it.each([0, 3, 7])('rejects the whole batch when item %i is bad, writing nothing', async (bad) => {
    const items = (structuredClone(PRODUCTION) as any[]).map((p) => ({
      ...p,
      external_id: `b${bad}-${p.external_id}`,
      project_external_id: p.project_external_id && `b${bad}-70`,
    }));
    for (const p of items) {
      for (const [k, v] of Object.entries(p.data)) {
        if (v && typeof v === 'object' && !Array.isArray(v) && 'external_id' in v)
          (p.data as Record<string, unknown>)[k] = { ...v, external_id: `b${bad}-${v.external_id}` };
        if (Array.isArray(v)) (p.data as Record<string, unknown>)[k] = v.map((l) => ({ ...l, external_id: `b${bad}-${l.external_id}` }));
      }
    }
    if (items[7]!.entity_type === 'Project') items[7]!.data = { ...items[7]!.data, code: `b${bad}` };
    if (items[6]!.entity_type === 'User') items[6]!.data = { ...items[6]!.data, email: `b${bad}@shotgrid.test` };
    items[bad] = { ...items[bad]!, data: { ...items[bad]!.data, no_such_field: 1 } };
    const last = await lastEventId(admin.api);
    const res = await admin.api.post('/sync/import', { source: 'sg', items });
    expectValidation(res, ['body', 'items', bad, 'data', 'no_such_field']);
    expect(res.body.detail).toHaveLength(1);
    for (const p of items) {
      const m = expectStatus(await admin.api.get(`/sync/mappings?source=sg&entity_type=${p.entity_type}&external_id=${p.external_id}`), 200);
      expect(m.items).toEqual([]);
    }
    const marker = expectStatus(await admin.api.post('/entities/Sequence', { project_id: ids['Project:70'], data: { code: `m${bad}` } }), 200);
    const list = await eventually(async () => {
      const l = await eventsAfter(admin.api, last);
      return l.some((ev) => ev.entity_id === marker.id) ? l : undefined;
    });
    expect(list.map((ev) => ev.entity_id)).toEqual([marker.id]);
  });

  it('answers a dry run as the import would and writes nothing', async () => {
    const body = { source: 'sg', items: [{ external_id: '1104', entity_type: 'Shot', project_external_id: '70', data: { code: 'sh040' } }], dry_run: true };
    const dry = expectStatus(await admin.api.post('/sync/import', body), 200);
    expect(dry).toMatchObject({ created: 1, items: [{ external_id: '1104', entity_type: 'Shot', result: 'created' }] });
    expect(expectStatus(await admin.api.get('/sync/mappings?source=sg&entity_type=Shot&external_id=1104'), 200).items).toEqual([]);
    expect(expectStatus(await admin.api.get(`/entities/Shot/${dry.items[0].id}`), 404)).toBeDefined();
  });

  it('answers mappings both ways, for every role', async () => {
    const one = expectStatus(await artist.api.get('/sync/mappings?source=sg&entity_type=Shot&external_id=1101'), 200);
    expect(one.items).toEqual([{ source: 'sg', entity_type: 'Shot', external_id: '1101', id: ids['Shot:1101'] }]);
    const back = expectStatus(await artist.api.get(`/sync/mappings?id=${ids['Shot:1101']}`), 200);
    expect(back.items).toEqual([{ source: 'sg', entity_type: 'Shot', external_id: '1101', id: ids['Shot:1101'] }]);
    expectValidation(await artist.api.get('/sync/mappings'), ['query', 'source']);
  });

  it('feeds changes: records only, paged by next_after, no echo for the source, null once retired, external ids attached', async () => {
    const shot = ids['Shot:1102']!;
    const patched = expectStatus(await admin.api.patch(`/entities/Shot/${shot}`, { status: 'ip' }), 200);
    expect(patched.status).toBe('ip');
    expectStatus(await admin.api.post('/schema/statuses', { code: 'hold', name: 'Hold', state: 'blocked' }), 200);
    expectStatus(await admin.api.delete(`/entities/Shot/${ids['Shot:1103']}`), 200);
    const all = await eventually(async () => {
      const list = await eventsAfter(admin.api, start);
      return list.some((ev) => ev.entity_id === ids['Shot:1103'] && ev.action === 'delete') ? list : undefined;
    });
    expect(all.some((ev) => ev.entity_type.startsWith('Schema'))).toBe(true);

    // Without a source: every record event after `start`, none of the schema's; paged two at a time.
    const seen: any[] = [];
    let after = start;
    for (let pages = 0; pages < 100; pages += 1) {
      const page = expectStatus(await artist.api.get(`/sync/changes?after=${after}&limit=2`), 200);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      if (page.next_after === after) break;
      after = page.next_after;
    }
    const recordEvents = all.filter((ev) => !ev.entity_type.startsWith('Schema'));
    expect(seen.map((c) => c.event_id)).toEqual(recordEvents.map((ev) => ev.id));
    const created = seen.find((c) => c.id === ids['Shot:1101']);
    expect(created).toMatchObject({ action: 'create', entity_type: 'Shot', external_ids: { sg: '1101' }, record: { id: ids['Shot:1101'], status: 'wtg' } });
    expect(seen.filter((c) => c.id === ids['Shot:1103']).every((c) => c.record === null)).toBe(true);

    // With source=sg: sg's own imports are left out; the artist's patch and the delete remain.
    const mirrored = expectStatus(await admin.api.get(`/sync/changes?after=${start}&source=sg&limit=1000`), 200);
    const ours = mirrored.items.filter((c: any) => Object.values(ids).includes(c.id));
    expect(ours.map((c: any) => [c.action, c.id])).toEqual([
      ['update', shot],
      ['delete', ids['Shot:1103']],
    ]);
    expect(ours[0]).toMatchObject({ external_ids: { sg: '1102' }, record: { status: 'ip' } });
    // Another source sees the imports too.
    const other = expectStatus(await admin.api.get(`/sync/changes?after=${start}&source=kitsu&limit=1000`), 200);
    expect(other.items.length).toBe(seen.length);
    expect(mirrored.next_after).toBe(all.at(-1)!.id);
  });
});
