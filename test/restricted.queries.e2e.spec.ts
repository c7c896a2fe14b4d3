/**
 * Restricted projects and the routes that read many records, against the whole stack
 * (docs/api-notes.md, "Restricted projects", "Queries", "Summaries", "Work views"): a caller who is
 * not a reader of the restricted project gets none of its records from a query — with or without
 * a project filter, in totals and pages, through a link-traversal filter — nor in summaries or a
 * record's notes list (404 for one of its records), while members and Admins get everything.
 */
import { describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import type { Session } from './support/e2e.stack.js';
import { expectHidden, idsOf, link, useRestrictedWorld, type ProjectRecords, type RestrictedWorld } from './support/restricted.fixture.js';

/** The world's record kinds, each a (type, field of ProjectRecords) pair. */
const KINDS: Array<[string, keyof ProjectRecords]> = [
  ['Project', 'project'],
  ['Sequence', 'sequence'],
  ['Shot', 'shot'],
  ['Task', 'task'],
  ['Version', 'version'],
  ['Representation', 'representation'],
  ['Note', 'note'],
  ['Playlist', 'playlist'],
  ['TimeLog', 'timeLog'],
  ['FarmJob', 'farmJob'],
];

describe('restricted projects: queries, summaries, notes lists (whole stack)', () => {
  let w: RestrictedWorld;
  useRestrictedWorld('restricted-queries', (world) => (w = world));

  const query = async (s: Session, type: string, body: Record<string, unknown>) =>
    expectStatus(await s.api.post(`/entities/${type}/query`, { limit: 1000, ...body }), 200, `query ${type}`);
  const ids = async (s: Session, type: string, filters: unknown) => idsOf((await query(s, type, { filters })).items);
  const sorted = (...xs: string[]) => [...xs].sort();

  it('a query without a project filter leaves the restricted project out, for every type', async () => {
    for (const [type, key] of KINDS) {
      const both = [w.open[key].id as string, w.restricted[key].id as string];
      const filters = [['id', 'in', both]];
      expect(await ids(w.outsider, type, filters), `outsider ${type}`).toEqual([w.open[key].id]);
      expect(await ids(w.coordOutsider, type, filters), `coordinator outsider ${type}`).toEqual([w.open[key].id]);
      expect(sorted(...(await ids(w.member, type, filters))), `member ${type}`).toEqual(sorted(...both));
      expect(sorted(...(await ids(w.admin, type, filters))), `Admin ${type}`).toEqual(sorted(...both));
    }
    // No filter at all: the whole type, still without the hidden records.
    for (const type of ['Project', 'Task', 'Note', 'Shot']) {
      const seenByOutsider = await ids(w.outsider, type, []);
      expect(
        seenByOutsider.filter((id) => w.hiddenIds.has(id)),
        `outsider ${type} without filters`,
      ).toEqual([]);
      const seenByMember = await ids(w.member, type, []);
      expect(seenByMember.filter((id) => w.hiddenIds.has(id)).length, `member ${type} without filters`).toBeGreaterThan(0);
    }
    expect(await ids(w.outsider, 'Shot', [])).toContain(w.crossShot.id);
  });

  it('a project filter on the restricted project matches nothing for a non-member, everything for a member', async () => {
    const R = w.restricted.project.id;
    const O = w.open.project.id;
    for (const [type, key] of KINDS.filter(([t]) => t !== 'Project')) {
      const hidden = await query(w.outsider, type, { filters: [['project_id', 'is', R]], include_total: true });
      expect({ items: hidden.items, total: hidden.total }, `outsider ${type}`).toEqual({ items: [], total: 0 });
      const member = await query(w.member, type, { filters: [['project_id', 'is', R]], include_total: true });
      expect(idsOf(member.items), `member ${type}`).toContain(w.restricted[key].id);
      expect(member.total).toBe(member.items.length);
      const admin = await query(w.admin, type, { filters: [['project_id', 'is', R]], include_total: true });
      expect(admin.total, `Admin ${type}`).toBe(member.total);
      // Both projects named: the open one's only.
      const either = await ids(w.outsider, type, [['project_id', 'in', [O, R]]]);
      expect(either).toContain(w.open[key].id);
      expect(either.filter((id) => w.hiddenIds.has(id))).toEqual([]);
    }
  });

  it('include_total and pages count only what the caller may read', async () => {
    const filters = [['name', 'starts_with', 'world']];
    const outsider = await query(w.outsider, 'Task', { filters, include_total: true });
    expect({ ids: idsOf(outsider.items), total: outsider.total }).toEqual({ ids: [w.open.task.id], total: 1 });
    for (const s of [w.member, w.admin, w.coordMember]) {
      const all = await query(s, 'Task', { filters, include_total: true });
      expect({ ids: sorted(...idsOf(all.items)), total: all.total }).toEqual({ ids: sorted(w.open.task.id, w.restricted.task.id), total: 2 });
    }
    // Pages of one: the outsider walks exactly the readable records, whatever sorts between them.
    const walk = async (s: Session, order: unknown) => {
      const out: string[] = [];
      let cursor: string | null | undefined;
      for (let page = 0; page < 10; page++) {
        const body = await query(s, 'Task', { filters, order, limit: 1, ...(cursor ? { cursor } : {}) });
        out.push(...idsOf(body.items));
        cursor = body.next_cursor;
        if (!cursor) return out;
      }
      throw new Error('more pages than records');
    };
    for (const order of [[{ field: 'created_at', direction: 'asc' }], [{ field: 'created_at', direction: 'desc' }]]) {
      expect(await walk(w.outsider, order)).toEqual([w.open.task.id]);
      expect(sorted(...(await walk(w.member, order)))).toEqual(sorted(w.open.task.id, w.restricted.task.id));
    }
  });

  it('a link-traversal filter never reaches through a hidden record', async () => {
    const secretSeq = w.restricted.sequence.data.code as string;
    const bySeq = [['sequence.Sequence.code', 'is', secretSeq]];
    expect(await ids(w.outsider, 'Shot', bySeq), 'outsider: the cross Shot is readable, its Sequence is not').toEqual([]);
    for (const s of [w.member, w.admin]) expect(sorted(...(await ids(s, 'Shot', bySeq)))).toEqual(sorted(w.restricted.shot.id, w.crossShot.id));
    const twoHops = [['entity.Shot.sequence.Sequence.code', 'is', secretSeq]];
    expect(await ids(w.outsider, 'Task', twoHops)).toEqual([]);
    expect(await ids(w.member, 'Task', twoHops)).toEqual([w.restricted.task.id]);
    // Through a multi_link: the restricted Note linking the open Shot is not reached from the open side either.
    expect(await ids(w.outsider, 'Note', [['links.Shot.code', 'is', w.open.shot.data.code]])).toEqual([w.open.note.id]);
    expect(sorted(...(await ids(w.member, 'Note', [['links.Shot.code', 'is', w.open.shot.data.code]])))).toEqual(sorted(w.open.note.id, w.crossNote.id));
    // The open side still traverses as before.
    expect(await ids(w.outsider, 'Task', [['entity.Shot.code', 'is', w.open.shot.data.code]])).toEqual([w.open.task.id]);
  });

  it('summaries leave the restricted project out', async () => {
    const body = (filters: unknown) => ({
      filters,
      summary_fields: [
        { field: 'id', type: 'record_count' },
        { field: 'name', type: 'status_list' },
      ],
      grouping: [{ field: 'entity', type: 'exact' }],
    });
    const summarize = async (s: Session, filters: unknown) => expectStatus(await s.api.post('/entities/Task/summarize', body(filters)), 200, 'summarize');
    const world = [['name', 'starts_with', 'world']];
    const outsider = await summarize(w.outsider, world);
    expect(outsider.summaries).toEqual({ id: 1, name: [w.open.task.data.name] });
    expect(outsider.groups.map((g: any) => [g.group_name, g.group_value])).toEqual([[w.open.shot.data.code, link(w.open.shot)]]);
    for (const s of [w.member, w.admin]) {
      const all = await summarize(s, world);
      expect(all.summaries).toEqual({ id: 2, name: [w.open.task.data.name, w.restricted.task.data.name].sort() });
      expect(all.groups.map((g: any) => g.group_name)).toEqual([w.open.shot.data.code, w.restricted.shot.data.code].sort());
    }
    const onlyHidden = await summarize(w.outsider, [['project_id', 'is', w.restricted.project.id]]);
    expect(onlyHidden.summaries.id).toBe(0);
    expect(onlyHidden.groups).toEqual([]);
  });

  it("a record's notes list: 404 for a hidden record, and the hidden project's notes left out of a readable record's", async () => {
    const hiddenPath = `/entities/Shot/${w.restricted.shot.id}/notes`;
    expectHidden(await w.outsider.api.get(hiddenPath), 'outsider notes of the restricted Shot');
    expectHidden(await w.coordOutsider.api.get(hiddenPath), 'coordinator outsider notes of the restricted Shot');
    for (const s of [w.member, w.admin]) expect(idsOf(expectStatus(await s.api.get(hiddenPath), 200).items)).toEqual([w.restricted.note.id]);

    const openPath = `/entities/Shot/${w.open.shot.id}/notes`;
    const outsiderNotes = idsOf(expectStatus(await w.outsider.api.get(openPath), 200).items);
    expect(outsiderNotes).toContain(w.open.note.id);
    expect(outsiderNotes).not.toContain(w.crossNote.id);
    for (const s of [w.member, w.admin]) {
      const notes = idsOf(expectStatus(await s.api.get(openPath), 200).items);
      expect(notes).toEqual(expect.arrayContaining([w.open.note.id, w.crossNote.id]));
    }
  });
});
