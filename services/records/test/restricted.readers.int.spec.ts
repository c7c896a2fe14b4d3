/**
 * Restricted projects in the records service's core and shares calls, against the real PostgreSQL
 * through records' signed gRPC service (docs/api-notes.md, "Restricted projects"; docs/queries.md,
 * "Restricted projects"). One restricted project with one member, one open project, and records
 * linking across them. For a user who is not a member, the restricted project and everything in it
 * do not exist: every call naming one of its records is 404, a create into it is 404 as a read of
 * the Project is, a link into it is a dead link, and queries, summaries, notes, tasks and timesheets
 * leave it out (a filter cannot match through one of its records either); members, Admins and
 * services see everything, and the open project is the same for everyone.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import { encodeCursor, planQuery, type QueryInput } from '../src/core/domain/record.query.js';
import { queryStatements, runQueryPlan } from '../src/core/store/query.repository.js';
import { projectReadableSql, readableSql } from '../src/kernel/store/project.readers.sql.js';
import { compileSchema, type SchemaSnapshot } from '../src/kernel/domain/schema.snapshot.js';
import { startRecordsWorld, text, type RecordsWorld } from './records.world.js';

const asService: CallContext = { requestId: 'rr-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const admin: CallContext = { requestId: 'rr-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const as = (userId: string): CallContext => ({ requestId: 'rr', principal: { userId, role: 'Coordinator', authKind: 'token' } });

const multi = (code: string, types?: string[]) => ({ code, type: 'multi_link' as const, ...(types ? { link_types: types } : {}) });
const one = (code: string, types?: string[]) => ({ code, type: 'link' as const, ...(types ? { link_types: types } : {}) });
const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    { code: 'Project', project_scoped: false, fields: [text('name'), text('code'), { code: 'restricted', type: 'boolean' }, multi('members', ['User'])] },
    { code: 'User', project_scoped: false, fields: [text('name')] },
    { code: 'Sequence', project_scoped: true, fields: [text('code')] },
    { code: 'Shot', project_scoped: true, fields: [text('code'), one('sequence', ['Sequence'])] },
    { code: 'Task', project_scoped: true, fields: [text('name'), text('step'), one('entity', ['Shot']), multi('assignees', ['User'])] },
    { code: 'Version', project_scoped: true, fields: [text('code')] },
    { code: 'Note', project_scoped: true, fields: [text('content'), multi('links'), one('author', ['User']), text('guest_name')] },
    { code: 'Playlist', project_scoped: true, fields: [text('name'), multi('versions', ['Version'])] },
    {
      code: 'TimeLog',
      project_scoped: true,
      fields: [one('user', ['User']), one('task', ['Task']), { code: 'date', type: 'date' }, { code: 'minutes', type: 'integer' }],
    },
  ],
  statuses: [{ code: 'ip' }],
  steps: [{ code: 'comp' }],
  priorities: [],
  transitions: {},
  task_templates: [{ code: 'std', entity_type: 'Shot', tasks: [{ name: 'Comp', step: 'comp' }] }],
};
const schema = compileSchema(1, SNAPSHOT);

let w: RecordsWorld;
let client: GrpcClient<recordsv1.RecordsServiceClient>;
const link = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });
const ids = (rs: { id: string }[]) => rs.map((r) => r.id).sort();
const kind = async (p: Promise<unknown>) => (await appErrorOf(p)).kind;

async function create(entityType: string, projectId: string | undefined, data: Record<string, unknown>, ctx: CallContext = admin) {
  return (await client.call.createRecord({ entityType, projectId, dataJson: JSON.stringify(data) }, ctx)).record!;
}

let memberUser: recordsv1.Record;
let outsiderUser: recordsv1.Record;
let member: CallContext;
let outsider: CallContext;
/** Records by name: `S` ones live in the restricted project, `O` ones in the open project. */
const r: Record<string, recordsv1.Record> = {};

beforeAll(async () => {
  w = await startRecordsWorld('restricted', { OUTBOX_POLL_MS: '200' });
  client = w.client;
  await client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
  memberUser = await create('User', undefined, { name: 'Mia' });
  outsiderUser = await create('User', undefined, { name: 'Otto' });
  member = as(memberUser.id);
  outsider = as(outsiderUser.id);
  r.secret = await create('Project', undefined, { name: 'Secret', code: 'sec', restricted: true, members: [link(memberUser)] });
  r.open = await create('Project', undefined, { name: 'Open', code: 'opn' });
  const S = r.secret.id;
  const O = r.open.id;
  r.seqS = await create('Sequence', S, { code: 'SQ030' });
  r.seqO = await create('Sequence', O, { code: 'SQ050' });
  r.shotS = await create('Shot', S, { code: 'sh_s', sequence: link(r.seqS) });
  // A hidden Shot in the path from an open Task to an open Sequence.
  r.shotH = await create('Shot', S, { code: 'sh_h', sequence: link(r.seqO) });
  r.shotO = await create('Shot', O, { code: 'sh_o', sequence: link(r.seqO) });
  const both = [link(memberUser), link(outsiderUser)];
  r.taskS = await create('Task', S, { name: 'hidden task', entity: link(r.shotS), assignees: both });
  r.taskO = await create('Task', O, { name: 'open task', entity: link(r.shotO), assignees: both });
  // Open Tasks whose entity is a hidden Shot (linked while the links were written by an Admin).
  r.taskX = await create('Task', O, { name: 'open task, hidden shot', entity: link(r.shotS), assignees: both });
  r.taskY = await create('Task', O, { name: 'open task via hidden shot', entity: link(r.shotH) });
  r.versionS = await create('Version', S, { code: 'v_s' });
  r.versionO = await create('Version', O, { code: 'v_o' });
  r.playlistS = await create('Playlist', S, { name: 'hidden dailies', versions: [link(r.versionS)] });
  r.noteS = await create('Note', S, { content: 'hidden note on an open shot', links: [link(r.shotO), link(r.shotS)] });
  r.noteO = await create('Note', O, { content: 'open note', links: [link(r.shotO), link(r.shotS)] });
  r.logS = await create('TimeLog', S, { user: link(outsiderUser), task: link(r.taskS), date: '2026-03-02', minutes: 60 });
  r.logO = await create('TimeLog', O, { user: link(outsiderUser), task: link(r.taskO), date: '2026-03-03', minutes: 30 });
});

afterAll(async () => {
  await w?.stop();
});

describe('GetRecord, UpdateRecord, RetireRecord, ReviveRecord', () => {
  it('answer 404 to a non-member for a record of the restricted project and for the Project itself; members, Admins and services see them', async () => {
    for (const rec of [r.shotS!, r.secret!, r.playlistS!]) {
      expect(await kind(client.call.getRecord({ entityType: rec.entityType, id: rec.id }, outsider))).toBe('not_found');
      for (const ctx of [member, admin, asService])
        expect((await client.call.getRecord({ entityType: rec.entityType, id: rec.id }, ctx)).record!.id).toBe(rec.id);
    }
    for (const rec of [r.shotO!, r.open!, memberUser])
      expect((await client.call.getRecord({ entityType: rec.entityType, id: rec.id }, outsider)).record!.id).toBe(rec.id);
  });

  it('write nothing for a non-member (404) and everything for a member', async () => {
    const shot = await create('Shot', r.secret!.id, { code: 'sh_w' });
    expect(await kind(client.call.updateRecord({ entityType: 'Shot', id: shot.id, status: { value: 'ip' } }, outsider))).toBe('not_found');
    expect(await kind(client.call.retireRecord({ entityType: 'Shot', id: shot.id }, outsider))).toBe('not_found');
    expect((await client.call.updateRecord({ entityType: 'Shot', id: shot.id, status: { value: 'ip' } }, member)).record!.status).toBe('ip');
    await client.call.retireRecord({ entityType: 'Shot', id: shot.id }, member);
    expect(await kind(client.call.reviveRecord({ entityType: 'Shot', id: shot.id }, outsider))).toBe('not_found');
    expect((await client.call.reviveRecord({ entityType: 'Shot', id: shot.id }, member)).record!.id).toBe(shot.id);
    const mine = await create('Shot', r.open!.id, { code: 'sh_mine' }, outsider);
    expect(await kind(client.call.updateRecord({ entityType: 'Shot', id: mine.id, projectId: { value: r.secret!.id } }, outsider))).toBe('not_found');
    expect((await client.call.updateRecord({ entityType: 'Shot', id: mine.id, status: { value: 'ip' } }, outsider)).record!.status).toBe('ip');
  });
});

describe('CreateRecord', () => {
  it('into the restricted project: 404 for a non-member as a read of that Project, also with a task template; a missing project stays the 422', async () => {
    const err = await appErrorOf(create('Shot', r.secret!.id, { code: 'x' }, outsider));
    expect(err).toMatchObject({ kind: 'not_found', message: `Project ${r.secret!.id} not found` });
    const read = await appErrorOf(client.call.getRecord({ entityType: 'Project', id: r.secret!.id }, outsider));
    expect(err.message).toBe(read.message);
    const templated = client.call.createRecord({ entityType: 'Shot', projectId: r.secret!.id, dataJson: '{"code":"t"}', taskTemplate: 'std' }, outsider);
    expect(await kind(templated)).toBe('not_found');
    expect(await kind(create('Shot', newId(), { code: 'x' }, outsider))).toBe('invalid');
    expect((await create('Shot', r.secret!.id, { code: 'by member' }, member)).projectId).toBe(r.secret!.id);
    const count = await w.sql.query(`select count(*)::int as n from records.record where data->>'code' in ('x', 't')`);
    expect(count.rows[0].n).toBe(0);
  });

  it('a link into the restricted project is a dead link to a non-member: the same 422 as a missing record, on create, update and a Playlist’s versions', async () => {
    const hidden = await appErrorOf(create('Task', r.open!.id, { name: 'n', entity: link(r.shotS!) }, outsider));
    const missingId = newId();
    const missing = await appErrorOf(create('Task', r.open!.id, { name: 'n', entity: { type: 'Shot', id: missingId } }, outsider));
    expect(hidden.problems).toEqual([{ loc: ['data', 'entity'], msg: `no live Shot with id ${r.shotS!.id}`, type: 'link_not_found' }]);
    expect(missing.problems).toEqual([{ loc: ['data', 'entity'], msg: `no live Shot with id ${missingId}`, type: 'link_not_found' }]);
    const playlist = await appErrorOf(create('Playlist', r.open!.id, { name: 'p', versions: [link(r.versionS!)] }, outsider));
    expect(playlist.problems.map((p) => p.type)).toEqual(['link_not_found']);
    const update = client.call.updateRecord({ entityType: 'Task', id: r.taskO!.id, dataJson: JSON.stringify({ entity: link(r.shotS!) }) }, outsider);
    expect((await appErrorOf(update)).problems).toEqual([hidden.problems[0]]);
    expect((await create('Task', r.open!.id, { name: 'by member', entity: link(r.shotS!) }, member)).projectId).toBe(r.open!.id);
  });

  it('many creates at once (one group statement): a non-member’s into the project or linking into it fail alone, a member’s are written', async () => {
    const writes = Array.from({ length: 12 }, (_, i) => {
      const who = i % 2 ? member : outsider;
      return i % 4 < 2 ? create('Shot', r.secret!.id, { code: `g${i}` }, who) : create('Task', r.open!.id, { name: `g${i}`, entity: link(r.shotS!) }, who);
    });
    const outcomes = await Promise.all(
      writes.map((p) =>
        p.then(
          () => 'ok',
          (e: unknown) => (e as { kind?: string }).kind,
        ),
      ),
    );
    expect(outcomes).toEqual(Array.from({ length: 12 }, (_, i) => (i % 2 ? 'ok' : i % 4 < 2 ? 'not_found' : 'invalid')));
  });

  it('a keyed create into it answers (and keeps) the non-member’s own 404, never a record', async () => {
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const keyed = (who: string) => ({
      claim: { scope: sha(`k-${who}`), bodyHash: sha('b'), leaseMs: 60_000, keepMs: 86_400_000, principal: `user:${who}`, maxKeys: 0 },
      pathParams: ['entity_type'],
      queryParams: [],
    });
    const write = (who: recordsv1.Record, ctx: CallContext) =>
      client.call.createRecord({ entityType: 'Shot', projectId: r.secret!.id, dataJson: '{"code":"keyed"}', keyed: keyed(who.id) }, ctx);
    expect((await write(memberUser, member)).record!.projectId).toBe(r.secret!.id);
    expect(await kind(write(outsiderUser, outsider))).toBe('not_found');
    const replay = await write(outsiderUser, outsider);
    expect(replay.record).toBeUndefined();
    expect(replay.key!.answer).toMatchObject({ status: 404 });
    expect(JSON.parse(replay.key!.answer!.body)).toMatchObject({ code: 'not_found' });
  });
});

describe('BatchRecords', () => {
  it('each request obeys the rule: the batch fails with the index of the one naming the project, and writes nothing', async () => {
    const batch = (requests: unknown[], ctx: CallContext) => client.call.batchRecords({ requestsJson: JSON.stringify(requests) }, ctx);
    const ok = { request_type: 'create', entity_type: 'Shot', project_id: r.open!.id, data: { code: 'b_ok' } };
    const shot = await create('Shot', r.secret!.id, { code: 'sh_b' });
    const cases: [unknown, string][] = [
      [{ request_type: 'update', entity_type: 'Shot', entity_id: shot.id, data: { code: 'b' } }, 'not_found'],
      [{ request_type: 'delete', entity_type: 'Shot', entity_id: shot.id }, 'not_found'],
      [{ request_type: 'create', entity_type: 'Shot', project_id: r.secret!.id, data: { code: 'b' } }, 'not_found'],
      [{ request_type: 'create', entity_type: 'Task', project_id: r.open!.id, data: { name: 'b', entity: link(r.shotS!) } }, 'invalid'],
    ];
    for (const [request, expected] of cases) {
      const err = await appErrorOf(batch([ok, request], outsider));
      expect(err.kind).toBe(expected);
      if (expected === 'invalid') expect(err.problems[0]!.loc).toEqual(['requests', 1, 'data', 'entity']);
      else expect(err.extra).toMatchObject({ index: 1 });
      const answer = JSON.parse((await batch([ok, request], member)).json) as { results: unknown[] };
      expect(answer.results).toHaveLength(2);
    }
    expect((await w.sql.query(`select count(*)::int as n from records.record where data->>'code' = 'b_ok'`)).rows[0].n).toBe(cases.length);
  });
});

type Q = Omit<Partial<QueryInput>, 'filtersJson'> & { filters?: unknown };
const query = (entityType: string, q: Q, ctx: CallContext) =>
  client.call.queryRecords(
    {
      entityType,
      filtersJson: q.filters === undefined ? undefined : JSON.stringify(q.filters),
      order: [],
      limit: q.limit ?? 1000,
      cursor: q.cursor,
      includeTotal: q.includeTotal ?? false,
      includeRetired: false,
      answerJson: false,
    },
    ctx,
  );
const found = async (entityType: string, filters: unknown, ctx: CallContext) => ids((await query(entityType, { filters }, ctx)).items);

describe('QueryRecords', () => {
  it('leaves the project and its records out for a non-member, with include_total counting what they may read', async () => {
    const shots = await query('Shot', { includeTotal: true }, outsider);
    expect(shots.items.every((s) => s.projectId === r.open!.id)).toBe(true);
    expect(shots.total).toBe(shots.items.length);
    const all = await query('Shot', { includeTotal: true }, member);
    expect(ids(all.items)).toEqual(expect.arrayContaining([r.shotS!.id, r.shotH!.id, r.shotO!.id]));
    expect((await query('Shot', { includeTotal: true }, admin)).total).toBe(all.total);
    expect(ids((await query('Project', {}, outsider)).items)).toEqual([r.open!.id]);
    expect(ids((await query('Project', {}, member)).items)).toEqual(ids([r.secret!, r.open!]));
  });

  it('pages by cursor over exactly the readable records', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await query('Task', { limit: 1, cursor }, outsider);
      seen.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual(ids((await query('Task', {}, outsider)).items));
    expect(seen).not.toContain(r.taskS!.id);
    expect(seen).toEqual(expect.arrayContaining([r.taskO!.id, r.taskX!.id, r.taskY!.id]));
  });

  it('a filter cannot match through a record of the project: link hops, the EXISTS form and negated paths', async () => {
    const viaHidden = [['entity.Shot.code', 'is', 'sh_s']];
    const anyGroup = { filter_operator: 'any', filters: viaHidden };
    const twoHops = [['entity.Shot.sequence.Sequence.code', 'is', 'SQ050']];
    const ofShotS = (await query('Task', { filters: [['entity', 'is', link(r.shotS!)]] }, admin)).items;
    expect(ids(ofShotS)).toEqual(expect.arrayContaining([r.taskS!.id, r.taskX!.id]));
    expect(await found('Task', viaHidden, outsider)).toEqual([]);
    expect(await found('Task', anyGroup, outsider)).toEqual([]);
    expect(await found('Task', viaHidden, member)).toEqual(ids(ofShotS));
    expect(await found('Task', anyGroup, admin)).toEqual(ids(ofShotS));
    // Through a hidden Shot to an open Sequence: the Shot's hop may not be taken either.
    expect(await found('Task', twoHops, outsider)).toEqual([r.taskO!.id]);
    expect(await found('Task', twoHops, member)).toEqual(ids([r.taskO!, r.taskY!]));
    // To a non-member a link into the project is as empty as a dead one.
    const everyTask = async (ctx: CallContext) => ids((await query('Task', {}, ctx)).items);
    expect(await found('Task', [['entity.Shot.code', 'is_not', 'sh_s']], outsider)).toEqual(await everyTask(outsider));
    const notOfShotS = (await everyTask(admin)).filter((id) => !ids(ofShotS).includes(id));
    expect(await found('Task', [['entity.Shot.code', 'is_not', 'sh_s']], admin)).toEqual(notOfShotS);
    // The link value itself is the record's own, returned and matched as stored.
    const openOfShotS = ids(ofShotS.filter((t) => t.projectId === r.open!.id));
    expect(openOfShotS).toContain(r.taskX!.id);
    expect(await found('Task', [['entity', 'is', link(r.shotS!)]], outsider)).toEqual(openOfShotS);
  });

  it('answers the same with hops, their EXISTS fallback past the cap and the EXISTS form alone', async () => {
    const reader = { userId: outsiderUser.id, sql: { readable: readableSql, projectReadable: projectReadableSql } };
    for (const filters of [[['entity.Shot.sequence.Sequence.code', 'is', 'SQ050']], [['entity.Shot.code', 'in', ['sh_s', 'sh_o']]]]) {
      const input = { entityType: 'Task', filtersJson: JSON.stringify(filters), includeTotal: true };
      const answers = [];
      for (const options of [{ reader }, { reader, hopCap: 0 }, { reader, linkHops: false }]) {
        const { plan } = planQuery(schema, input, options);
        const out = await runQueryPlan(w.sql, { ...plan, limit: plan.limit + 1 });
        answers.push({ ids: out.rows.map((row) => (JSON.parse(row.json) as { id: string }).id).sort(), total: out.total });
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
      expect(answers[0]!.ids).toEqual(await found('Task', filters, outsider));
      expect(answers[0]!.ids).not.toContain(r.taskY!.id);
      expect(answers[0]!.ids).not.toContain(r.taskS!.id);
    }
  });

  it('walked project by project (a caller who reads few projects), a page is the same rows in the same order, page after page', async () => {
    const reader = { userId: outsiderUser.id, sql: { readable: readableSql, projectReadable: projectReadableSql } };
    const inputs = [
      { entityType: 'Task' },
      { entityType: 'Task', order: [{ field: 'name', direction: 'desc' as const }] },
      { entityType: 'Task', filtersJson: '[["entity.Shot.code", "in", ["sh_s", "sh_o"]]]' },
      { entityType: 'Project' },
      { entityType: 'User' },
    ];
    for (const input of inputs) {
      const walks: string[][] = [];
      for (const byProject of [false, true]) {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const { plan, fingerprint } = planQuery(schema, { ...input, limit: 2, cursor }, { reader, linkHops: false });
          expect(plan.unscopedWhere).toBeDefined();
          const out = await runQueryPlan(w.sql, { ...plan, limit: 3 }, undefined, { byProject });
          const page = out.rows.slice(0, 2);
          seen.push(...page.map((row) => (JSON.parse(row.json) as { id: string }).id));
          cursor = out.rows.length > 2 ? encodeCursor({ k: page[1]!.keys, o: fingerprint }) : undefined;
        } while (cursor);
        walks.push(seen);
      }
      expect(walks[1]).toEqual(walks[0]);
      expect(walks[0]).not.toContain(r.secret!.id);
      expect(walks[0]).not.toContain(r.taskS!.id);
    }
  });

  it('the set of projects the caller may not read is one hashed SubPlan of the statement, not a subquery per row', async () => {
    const reader = { userId: outsiderUser.id, sql: { readable: readableSql, projectReadable: projectReadableSql } };
    const input = { entityType: 'Task', filtersJson: '[["entity.Shot.sequence.Sequence.code", "is", "SQ050"]]', includeTotal: true };
    for (const linkHops of [true, false]) {
      const { plan } = planQuery(schema, input, { reader, linkHops });
      const { page, count } = queryStatements({ ...plan, limit: 51 });
      for (const st of [page, count!]) {
        const lines = (await w.sql.query<{ 'QUERY PLAN': string }>(`explain ${st.text}`, st.values)).rows.map((l) => l['QUERY PLAN']);
        const text = lines.join('\n');
        // Each use of the rule is `NOT (hashed SubPlan n)`: the hidden set hashed once, each row probed in the hash.
        expect(text).toMatch(/NOT \(hashed SubPlan \d+\)/);
        expect(text.match(/SubPlan \d+\)/g)!.every((ref) => text.includes(`hashed ${ref}`))).toBe(true);
        expect(text).toContain('record_restricted_project_idx');
      }
    }
  });
});

describe('SummarizeRecords', () => {
  it('summarizes what the caller may read and names no group of a record they may not', async () => {
    const summarize = (ctx: CallContext) =>
      client.call
        .summarizeRecords(
          { entityType: 'Task', summaryFieldsJson: '[{"field":"name","type":"record_count"}]', groupingJson: '[{"field":"entity"}]', filtersJson: '' },
          ctx,
        )
        .then((a) => JSON.parse(a.json) as { summaries: { name: number }; groups: { group_name: string | null; group_value: { id: string } }[] });
    const mine = await summarize(outsider);
    const theirs = await summarize(member);
    expect(mine.summaries.name).toBe((await query('Task', {}, outsider)).items.length);
    expect(theirs.summaries.name).toBe((await query('Task', {}, member)).items.length);
    expect(mine.groups.find((g) => g.group_value.id === r.shotS!.id)!.group_name).toBeNull();
    expect(theirs.groups.find((g) => g.group_value.id === r.shotS!.id)!.group_name).toBe('sh_s');
    const filtered = await client.call.summarizeRecords(
      { entityType: 'Task', summaryFieldsJson: '[{"field":"name","type":"record_count"}]', filtersJson: '[["entity.Shot.code","is","sh_s"]]' },
      outsider,
    );
    expect(JSON.parse(filtered.json).summaries.name).toBe(0);
  });
});

describe('ListNotes, ListUserTasks, GetTimesheet', () => {
  it('notes: 404 for a record of the project; the project’s notes left out of an open record’s', async () => {
    expect(await kind(client.call.listNotes({ entityType: 'Shot', recordId: r.shotS!.id }, outsider))).toBe('not_found');
    expect(ids((await client.call.listNotes({ entityType: 'Shot', recordId: r.shotS!.id }, member)).notes)).toEqual(ids([r.noteS!, r.noteO!]));
    expect(ids((await client.call.listNotes({ entityType: 'Shot', recordId: r.shotO!.id }, outsider)).notes)).toEqual([r.noteO!.id]);
    expect(ids((await client.call.listNotes({ entityType: 'Shot', recordId: r.shotO!.id }, admin)).notes)).toEqual(ids([r.noteS!, r.noteO!]));
  });

  it('tasks and timesheets leave out the records of the project, whoever’s they are', async () => {
    const tasks = async (ctx: CallContext) => ids((await client.call.listUserTasks({ userId: outsiderUser.id }, ctx)).tasks);
    expect(await tasks(outsider)).toEqual(ids([r.taskO!, r.taskX!]));
    expect(await tasks(member)).toEqual(ids([r.taskS!, r.taskO!, r.taskX!]));
    const sheet = (ctx: CallContext) => client.call.getTimesheet({ userId: outsiderUser.id, from: '2026-03-01', to: '2026-03-31' }, ctx);
    expect(await sheet(outsider)).toMatchObject({ timeLogs: [{ id: r.logO!.id }], totalMinutes: 30 });
    expect(await sheet(admin)).toMatchObject({ timeLogs: [{ id: r.logS!.id }, { id: r.logO!.id }], totalMinutes: 90 });
  });
});

describe('share links', () => {
  it('create and list for a playlist of the project: 404 to a non-member; its guests are not filtered', async () => {
    const playlistId = r.playlistS!.id;
    expect(await kind(client.call.createShareLink({ playlistId, canComment: true }, outsider))).toBe('not_found');
    expect(await kind(client.call.listShareLinks({ playlistId }, outsider))).toBe('not_found');
    const { token, link: shared } = await client.call.createShareLink({ playlistId, canComment: true }, member);
    expect(await kind(client.call.revokeShareLink({ token }, outsider))).toBe('not_found');
    expect((await client.call.listShareLinks({ playlistId }, admin)).links).toHaveLength(1);
    const guest: CallContext = { requestId: 'rr-guest', principal: { userId: '', role: 'Guest', authKind: 'guest', guestName: 'G' } };
    const opened = await client.call.openShare({ token }, guest);
    expect(opened.versions.map((v) => v.id)).toEqual([r.versionS!.id]);
    expect((await client.call.checkShareLink({ linkId: shared!.id }, guest)).playlistId).toBe(playlistId);
    const note = await client.call.createGuestNote({ token, versionId: r.versionS!.id, comment: 'nice', guestName: 'G' }, guest);
    expect(note.note!.projectId).toBe(r.secret!.id);
  });
});

describe('membership', () => {
  it('is in force on the next call: a user added to members reads the project, removed again does not', async () => {
    const members = (list: recordsv1.Record[]) =>
      client.call.updateRecord({ entityType: 'Project', id: r.secret!.id, dataJson: JSON.stringify({ members: list.map(link) }) }, admin);
    await members([memberUser, outsiderUser]);
    expect((await client.call.getRecord({ entityType: 'Shot', id: r.shotS!.id }, outsider)).record!.id).toBe(r.shotS!.id);
    await members([memberUser]);
    expect(await kind(client.call.getRecord({ entityType: 'Shot', id: r.shotS!.id }, outsider))).toBe('not_found');
  });
});
