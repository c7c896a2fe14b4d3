/**
 * The link table against the real PostgreSQL (docs/queries.md, "Link hops and the link table"):
 * records.record_link holds exactly the links of live records' data (checked against an
 * independent reading of every row in TypeScript) after creates, updates that change or remove a
 * link, multi_link edits, retire, revive, delete, project moves, entity_type rename cascades and
 * values whose id is not a uuid (which never make a write fail).
 */
import { describe, expect, it } from 'vitest';
import { newId } from '@reelbase/lib-platform';
import { asAdmin, asService, sql, client, expectedLinks, storedLinks, insert, useLinkTableWorld } from './link.table.world.js';

useLinkTableWorld();

const createApi = (entityType: string, projectId: string | undefined, data: Record<string, unknown>) =>
  client.call.createRecord({ entityType, projectId, dataJson: JSON.stringify(data) }, asAdmin).then((r) => r.record!);

describe('records.record_link follows every write', () => {
  it('creates, updates, multi_link edits, retire, revive, delete, project moves and renames keep exactly the live links', async () => {
    const check = async (what: string) => expect(await storedLinks(), what).toEqual(await expectedLinks());
    const project = await createApi('Project', undefined, { name: 'Links', code: 'links' });
    const other = await createApi('Project', undefined, { name: 'Other', code: 'other' });
    const ann = await createApi('User', undefined, { name: 'Ann' });
    const bob = await createApi('User', undefined, { name: 'Bob' });
    const sq = await createApi('Sequence', project.id, { code: 'SQ010', owner: { type: 'User', id: ann.id } });
    const sq2 = await createApi('Sequence', project.id, { code: 'SQ020' });
    const shot = await createApi('Shot', project.id, {
      code: 'A',
      sequence: { type: 'Sequence', id: sq.id },
      watchers: [
        { type: 'User', id: ann.id },
        { type: 'User', id: bob.id },
      ],
    });
    const task = await createApi('Task', project.id, { name: 'comp', entity: { type: 'Shot', id: shot.id }, assignees: [{ type: 'User', id: ann.id }] });
    await check('after creates through the API');
    expect(await storedLinks()).toContain(`${shot.id} Shot.sequence ${sq.id} ${project.id}`);
    expect(await storedLinks()).toContain(`${shot.id} Shot.watchers[] ${bob.id} ${project.id}`);

    const update = (entityType: string, id: string, data: Record<string, unknown>, projectId?: string) =>
      client.call.updateRecord({ entityType, id, dataJson: JSON.stringify(data), ...(projectId ? { projectId: { value: projectId } } : {}) }, asAdmin);
    await update('Shot', shot.id, { sequence: { type: 'Sequence', id: sq2.id } });
    await check('a link changed');
    expect(await storedLinks()).not.toContain(`${shot.id} Shot.sequence ${sq.id} ${project.id}`);
    await update('Shot', shot.id, { watchers: [{ type: 'User', id: bob.id }] });
    await check('a multi_link element removed');
    await update('Shot', shot.id, { watchers: [] });
    await check('a multi_link emptied');
    await update('Shot', shot.id, { sequence: null });
    await check('a link removed');
    await update('Shot', shot.id, { code: 'A2' });
    await check('another field edited');
    await update('Task', task.id, { name: 'moved' }, other.id);
    await check('moved to another project');
    expect(await storedLinks()).toContain(`${task.id} Task.entity ${shot.id} ${other.id}`);

    await client.call.retireRecord({ entityType: 'Task', id: task.id }, asAdmin);
    await check('retired');
    expect((await storedLinks()).filter((r) => r.startsWith(task.id))).toEqual([]);
    await client.call.reviveRecord({ entityType: 'Task', id: task.id }, asAdmin);
    await check('revived');
    expect((await storedLinks()).filter((r) => r.startsWith(task.id)).length).toBe(2);

    // Values the API never writes but the table may hold (data stored before a field had its type, bulk writes).
    const odd = await insert('Note', project.id, {
      links: [
        { type: 'Shot', id: shot.id },
        { type: 'Shot', id: shot.id }, // twice: one row
        { type: 'Shot', id: 'not-a-uuid' },
        { type: 'Shot', id: 42 },
        { type: 'Shot' },
        'plain string',
        [{ id: ann.id }], // nested array: not an element link
        { id: bob.id.toUpperCase() },
      ],
      author: { id: `${ann.id}x` },
      ref: { type: 'User', id: { nested: ann.id } },
      json: { id: sq.id, other: true },
      empty: {},
      nothing: null,
    });
    await check('odd values: only uuid ids, lowercased, duplicates once, nothing failed');
    expect((await storedLinks()).filter((r) => r.startsWith(odd)).sort()).toEqual(
      [`${odd} Note.links[] ${shot.id} ${project.id}`, `${odd} Note.links[] ${bob.id} ${project.id}`, `${odd} Note.json ${sq.id} ${project.id}`].sort(),
    );
    const retiredAtBirth = await insert('Shot', project.id, { sequence: { type: 'Sequence', id: sq.id } }, true);
    await check('inserted retired');
    await sql.query('update records.record set retired_at = null where id = $1', [retiredAtBirth]);
    await check('revived by SQL');
    await sql.query('update records.record set data = $2::jsonb where id = $1', [retiredAtBirth, JSON.stringify({ sequence: [{ id: sq.id }] })]);
    await check('a link turned into a list');
    await sql.query('update records.record set entity_type = $2 where id = $1', [retiredAtBirth, 'Task']);
    await check('entity_type changed');
    await sql.query('delete from records.record where id = $1', [odd]);
    await check('deleted');
    expect((await storedLinks()).filter((r) => r.startsWith(odd))).toEqual([]);

    // The rename cascade rewrites link types inside data and the renamed type's own rows, in bulk.
    const linked = await insert('Shot', project.id, { sequence: { type: 'Sequence', id: sq.id }, watchers: [{ type: 'User', id: ann.id }] });
    await check('another Shot');
    const rename = (from: string, to: string) =>
      client.call.applyRename({ journalId: newId(), kind: 'entity_type', from, to, entityType: '', field: '' }, asService);
    await rename('Shot', 'Plate');
    await check('entity_type rename Shot → Plate');
    expect(await storedLinks()).toContain(`${task.id} Task.entity ${shot.id} ${other.id}`);
    expect(await storedLinks()).toContain(`${linked} Plate.sequence ${sq.id} ${project.id}`);
    expect(await storedLinks()).toContain(`${linked} Plate.watchers[] ${ann.id} ${project.id}`);
    await rename('Sequence', 'Seq');
    expect(await storedLinks()).toContain(`${linked} Plate.sequence ${sq.id} ${project.id}`);
    await check('entity_type rename Sequence → Seq');
    expect(await storedLinks()).toContain(`${sq.id} Seq.owner ${ann.id} ${project.id}`);
    await rename('Plate', 'Shot');
    await rename('Seq', 'Sequence');
    await check('renamed back');

    await sql.query('truncate records.record cascade');
    expect(await storedLinks()).toEqual([]);
  });
});
