/**
 * Restricted projects and the single-record routes, against the whole stack (docs/api-notes.md,
 * "Restricted projects"): for a user who is not a reader, every record of the project — the
 * Project's own included — answers 404, never 403, on GET, PATCH, DELETE and revive; creating a
 * record into it is 404; a batch with one request into it is 404 with that request's index and
 * writes nothing; a link to one of its records answers as a link to a record that does not exist,
 * while one already stored on a readable record is returned as stored. Members and Admins read and
 * write as before; studio-wide records stay readable by all; `restricted` and `members` changes
 * are in force on the very next request.
 */
import { describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { expectError } from './support/expect.helpers.js';
import {
  create,
  expectHidden,
  expectLikeMissing,
  link,
  LOG_DATE,
  MISSING_ID,
  useRestrictedWorld,
  userLink,
  type ProjectRecords,
  type RestrictedWorld,
} from './support/restricted.fixture.js';

/** The world's records of a project as (type, record) pairs, the Project's own first. */
const recordsOf = (p: ProjectRecords): any[] => [p.project, p.sequence, p.shot, p.task, p.version, p.representation, p.note, p.playlist, p.timeLog, p.farmJob];

describe('restricted projects: single records (whole stack)', () => {
  let w: RestrictedWorld;
  useRestrictedWorld('restricted-records', (world) => (w = world));

  /** A Shot of its own in the restricted project, written by the Admin. */
  let shots = 0;
  const hiddenShot = () => create(w.admin.api, 'Shot', { project_id: w.restricted.project.id, data: { code: `secret-own-${++shots}` } });

  it('GET of every record of the restricted project is 404 for a non-member and 200 for a member and the Admin', async () => {
    for (const r of [...recordsOf(w.restricted), w.crossNote]) {
      const path = `/entities/${r.entity_type}/${r.id}`;
      expectHidden(await w.outsider.api.get(path), `outsider GET ${r.entity_type}`);
      expectHidden(await w.coordOutsider.api.get(path), `coordinator outsider GET ${r.entity_type}`);
      expect(expectStatus(await w.member.api.get(path), 200, `member GET ${r.entity_type}`).id).toBe(r.id);
      expect(expectStatus(await w.coordMember.api.get(path), 200, `coordinator member GET ${r.entity_type}`).id).toBe(r.id);
      expect(expectStatus(await w.admin.api.get(path), 200, `Admin GET ${r.entity_type}`).id).toBe(r.id);
    }
    // The open project's records are read by everyone, the outsider included.
    for (const r of recordsOf(w.open)) {
      expect(expectStatus(await w.outsider.api.get(`/entities/${r.entity_type}/${r.id}`), 200, `outsider GET open ${r.entity_type}`).id).toBe(r.id);
    }
    // Studio-wide records (Users) stay readable by everyone.
    expect(expectStatus(await w.outsider.api.get(`/entities/User/${w.member.user.id}`), 200).id).toBe(w.member.user.id);
    expect(expectStatus(await w.outsider.api.get(`/entities/User/${w.coordMember.user.id}`), 200).id).toBe(w.coordMember.user.id);
  });

  it('a hidden record answers exactly as a record that does not exist', async () => {
    const hidden = await w.outsider.api.get(`/entities/Shot/${w.restricted.shot.id}`);
    const missing = await w.outsider.api.get(`/entities/Shot/${MISSING_ID}`);
    expectHidden(hidden, 'hidden Shot');
    expectLikeMissing(hidden, missing, 'GET Shot');
    // The path's type does not change that: the restricted Project read as a Project.
    expectLikeMissing(
      await w.outsider.api.get(`/entities/Project/${w.restricted.project.id}`),
      await w.outsider.api.get(`/entities/Project/${MISSING_ID}`),
      'GET Project',
    );
  });

  it('PATCH, DELETE and revive are 404 for a non-member and change nothing; a member may', async () => {
    const shot = await hiddenShot();
    const path = `/entities/Shot/${shot.id}`;
    const before = expectStatus(await w.admin.api.get(path), 200, 'Admin GET');
    expectHidden(await w.outsider.api.patch(path, { data: { description: 'outsider was here' } }), 'outsider PATCH');
    expectHidden(await w.outsider.api.patch(path, { data: { description: 'x' } }, { headers: { 'if-match': '*' } }), 'outsider PATCH If-Match *');
    expectHidden(await w.outsider.api.delete(path), 'outsider DELETE');
    expect(expectStatus(await w.admin.api.get(path), 200, 'Admin GET after the outsider')).toEqual(before);

    expect(expectStatus(await w.member.api.patch(path, { data: { description: 'member note' } }), 200, 'member PATCH').data.description).toBe('member note');
    expect(expectStatus(await w.member.api.delete(path), 200, 'member DELETE')).toMatchObject({ id: shot.id, retired: true });
    // Retired: the outsider's revive is 404 as before, and the record stays retired.
    expectHidden(await w.outsider.api.post(`${path}/revive`), 'outsider revive');
    expectHidden(await w.admin.api.get(path), 'still retired');
    expect(expectStatus(await w.member.api.post(`${path}/revive`), 200, 'member revive').id).toBe(shot.id);
    expect(expectStatus(await w.admin.api.get(path), 200).data.description).toBe('member note');
  });

  it('creating a record into the restricted project is 404, whatever the type, own time included', async () => {
    const pid = w.restricted.project.id;
    const tries: Array<[string, unknown]> = [
      ['Shot', { project_id: pid, data: { code: 'outsider-sh' } }],
      ['Sequence', { project_id: pid, data: { code: 'outsider-sq' } }],
      ['Note', { project_id: pid, data: { subject: 'hello', links: [link(w.open.shot)] } }],
      ['Version', { project_id: pid, data: { code: 'outsider_v001' } }],
      ['TimeLog', { project_id: pid, data: { user: userLink(w.outsider), date: LOG_DATE, minutes: 15 } }],
    ];
    for (const [type, body] of tries) expectHidden(await w.outsider.api.post(`/entities/${type}`, body), `outsider create ${type}`);
    expectHidden(
      await w.outsider.api.post('/farm/jobs', { project_id: pid, name: 'outsider', kind: 'render' }),
      'outsider POST /farm/jobs into the restricted project',
    );
    const made = await create(w.member.api, 'Shot', { project_id: pid, data: { code: 'member-sh' } });
    expect(made.project_id).toBe(pid);
    // Nothing the outsider tried was written.
    const found = expectStatus(
      await w.admin.api.post('/entities/Shot/query', {
        filters: [
          ['project_id', 'is', pid],
          ['code', 'in', ['outsider-sh', 'member-sh']],
        ],
      }),
      200,
    );
    expect(found.items.map((r: any) => r.data.code)).toEqual(['member-sh']);
  });

  it('moving a readable record into the restricted project is 404; linking one of its records answers as a link to a missing one', async () => {
    const own = await create(w.outsider.api, 'Shot', { project_id: w.open.project.id, data: { code: 'outsider-own' } });
    const path = `/entities/Shot/${own.id}`;
    expectHidden(await w.outsider.api.patch(path, { project_id: w.restricted.project.id }), 'move into the restricted project');
    expectLikeMissing(
      await w.outsider.api.patch(path, { data: { sequence: link(w.restricted.sequence) } }),
      await w.outsider.api.patch(path, { data: { sequence: { type: 'Sequence', id: MISSING_ID } } }),
      'link a hidden Sequence',
    );
    const noteBody = (target: { type: string; id: string }) => ({ project_id: w.open.project.id, data: { subject: 'see this', links: [target] } });
    const hiddenLink = await w.outsider.api.post('/entities/Note', noteBody(link(w.restricted.shot)));
    expect(hiddenLink.status, hiddenLink.text).toBe(422);
    expectLikeMissing(hiddenLink, await w.outsider.api.post('/entities/Note', noteBody({ type: 'Shot', id: MISSING_ID })), 'Note linking a hidden Shot');
    const after = expectStatus(await w.admin.api.get(path), 200);
    expect([after.project_id, after.data.sequence]).toEqual([w.open.project.id, undefined]);
    // A member links it.
    expectStatus(await w.member.api.post('/entities/Note', noteBody(link(w.restricted.shot))), 200, 'member Note linking the restricted Shot');
  });

  it('a link from a readable record to a hidden one is returned as stored, never resolved', async () => {
    const asOutsider = expectStatus(await w.outsider.api.get(`/entities/Shot/${w.crossShot.id}`), 200, 'outsider GET the cross Shot');
    expect(asOutsider.data.sequence).toEqual({ type: 'Sequence', id: w.restricted.sequence.id });
    expect(asOutsider).toEqual(expectStatus(await w.admin.api.get(`/entities/Shot/${w.crossShot.id}`), 200));
    // Following the link is a read of the hidden record: 404.
    expectHidden(await w.outsider.api.get(`/entities/Sequence/${asOutsider.data.sequence.id}`), 'following the link');
    // The outsider may still change the readable record; the stored link stays as it is.
    const patched = expectStatus(await w.outsider.api.patch(`/entities/Shot/${w.crossShot.id}`, { data: { cut_in: 1001 } }), 200, 'outsider PATCH');
    expect(patched.data.sequence).toEqual({ type: 'Sequence', id: w.restricted.sequence.id });
  });

  it('a batch with one request into the restricted project is 404 with its index and writes nothing', async () => {
    const shot = await hiddenShot();
    const before = expectStatus(await w.admin.api.get(`/entities/Shot/${shot.id}`), 200);
    const openCreate = { request_type: 'create', entity_type: 'Shot', project_id: w.open.project.id, data: { code: 'batch-open' } };
    const cases: Array<[string, unknown]> = [
      ['update', { request_type: 'update', entity_type: 'Shot', entity_id: shot.id, data: { description: 'batched' } }],
      ['delete', { request_type: 'delete', entity_type: 'Shot', entity_id: shot.id }],
      ['create', { request_type: 'create', entity_type: 'Shot', project_id: w.restricted.project.id, data: { code: 'batch-secret' } }],
    ];
    for (const [kind, request] of cases) {
      const res = await w.outsider.api.post('/batch', { requests: [openCreate, request] });
      expectHidden(res, `batch ${kind}`);
      expect(res.body.index, res.text).toBe(1);
    }
    const res0 = await w.outsider.api.post('/batch', { requests: [cases[2]![1], openCreate] });
    expectHidden(res0, 'batch create first');
    expect(res0.body.index).toBe(0);
    expect(expectStatus(await w.admin.api.get(`/entities/Shot/${shot.id}`), 200)).toEqual(before);
    const written = expectStatus(await w.admin.api.post('/entities/Shot/query', { filters: [['code', 'in', ['batch-open', 'batch-secret']]] }), 200);
    expect(written.items).toEqual([]);
    // The member's same batch goes through.
    const ok = expectStatus(await w.member.api.post('/batch', { requests: [openCreate, cases[0]![1]] }), 200, 'member batch');
    expect(ok.results[1]).toMatchObject({ id: shot.id, data: { description: 'batched' } });
  });

  it('Project records stay Admin-only writes: a non-Admin is refused for the role first, hidden project or not', async () => {
    for (const s of [w.outsider, w.member]) {
      const hidden = await s.api.patch(`/entities/Project/${w.restricted.project.id}`, { data: { description: 'mine now' } });
      expectError(hidden, 403, 'forbidden');
      expectLikeMissing(hidden, await s.api.patch(`/entities/Project/${MISSING_ID}`, { data: { description: 'mine now' } }), 'PATCH Project');
    }
    expectError(await w.member.api.patch(`/entities/Project/${w.restricted.project.id}`, { data: { members: [userLink(w.outsider)] } }), 403, 'forbidden');
  });

  it('restricted and members changes are in force on the very next request', async () => {
    const project = await create(w.admin.api, 'Project', { data: { name: 'Flip', code: `flip-${Date.now()}` } });
    const shot = await create(w.admin.api, 'Shot', { project_id: project.id, data: { code: 'flip-sh010' } });
    const read = (s: typeof w.outsider) => s.api.get(`/entities/Shot/${shot.id}`);
    const setProject = async (data: Record<string, unknown>) =>
      expectStatus(await w.admin.api.patch(`/entities/Project/${project.id}`, { data }), 200, 'PATCH Project');

    expectStatus(await read(w.outsider), 200, 'open');
    await setProject({ restricted: true });
    expectHidden(await read(w.outsider), 'restricted, no members');
    expectHidden(await read(w.member), 'restricted, no members (member of another project)');
    expectStatus(await read(w.admin), 200, 'Admin reads every project');
    await setProject({ members: [userLink(w.outsider)] });
    expectStatus(await read(w.outsider), 200, 'listed');
    expectHidden(await read(w.member), 'not listed');
    await setProject({ members: [] });
    expectHidden(await read(w.outsider), 'removed');
    await setProject({ restricted: false });
    expectStatus(await read(w.outsider), 200, 'open again');
    expectStatus(await read(w.member), 200, 'open again');
  });
});
