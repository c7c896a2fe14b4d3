/**
 * POST /entities/{entity_type}/query against the whole stack, every record written through the API:
 * the pipeline developer's query ("comp Tasks of shots in SQ010, in progress, due this week") through
 * a 2-hop link, nested groups at the deepest allowed depth, multi_link any-match, keyset pages with
 * a total, any role may query (Viewers included), retired records for Admins only, hostile values
 * that only match or not, and malformed filters located inside the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

describe('queries (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let viewer: Session;
  let projectId: string;
  const shots: Record<string, any> = {};
  const tasks: Record<string, any> = {};
  const link = (r: any) => ({ type: r.entity_type, id: r.id });
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const create = async (s: Session, type: string, body: unknown) => expectStatus(await s.api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const query = (s: Session, type: string, body: unknown) => s.api.post(`/entities/${type}/query`, body);
  const names = (body: any, key = 'code') => (body.items as any[]).map((r) => r.data[key]).sort();

  beforeAll(async () => {
    e = await startE2EStack('query');
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    for (const code of ['wtg', 'ip', 'fin'])
      expectStatus(await admin.api.post('/schema/statuses', { code, name: code, state: 'in_progress' }), 200, `status ${code}`);
    projectId = (await create(admin, 'Project', { data: { name: 'Query', code: 'query' } })).id;
    const sq10 = await create(admin, 'Sequence', { project_id: projectId, data: { code: 'SQ010' } });
    const sq20 = await create(admin, 'Sequence', { project_id: projectId, data: { code: 'SQ020' } });
    shots.a = await create(artist, 'Shot', { project_id: projectId, data: { code: 'sh010', sequence: link(sq10), cut_in: 1001 } });
    shots.b = await create(artist, 'Shot', { project_id: projectId, data: { code: 'sh020', sequence: link(sq10), cut_in: 1009 } });
    shots.c = await create(artist, 'Shot', { project_id: projectId, data: { code: 'sh030', sequence: link(sq20), cut_in: 1017 } });
    const me = { type: 'User', id: artist.user.id };
    const task = (name: string, shot: any, status: string, due: string, assignees: unknown[] = []) =>
      create(artist, 'Task', { project_id: projectId, status, data: { name, entity: link(shot), due_date: due, assignees } });
    tasks.a = await task('comp', shots.a, 'ip', day(3), [me]);
    tasks.b = await task('comp', shots.b, 'wtg', day(2));
    tasks.c = await task('comp', shots.c, 'ip', day(1), [me]);
    tasks.d = await task('roto', shots.a, 'ip', day(30));
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  it("a pipeline developer's query: comp Tasks of SQ010 shots, in progress, due this week — any role, Viewers included", async () => {
    const body = {
      filters: [
        ['entity.Shot.sequence.Sequence.code', 'is', 'SQ010'],
        ['name', 'is', 'comp'],
        ['status', 'is', 'ip'],
        ['due_date', 'in_next', 7, 'DAY'],
      ],
    };
    for (const s of [viewer, artist, admin]) {
      const res = expectStatus(await query(s, 'Task', body), 200, 'query');
      expect(res.items.map((r: any) => r.id)).toEqual([tasks.a.id]);
      expect(res.items[0]).toEqual(tasks.a);
      expect(res.next_cursor).toBeNull();
    }
    expectError(await e.api.post('/entities/Task/query', body), 401, 'unauthenticated');
  });

  it('nested any/all groups at depth 8 pass the gateway and the compiler; multi_link matches any element', async () => {
    let f: unknown = [['cut_in', 'greater_than', 1005]];
    for (let i = 0; i < 7; i++) f = [{ filter_operator: i % 2 ? 'all' : 'any', filters: f as unknown[] }];
    expect(names(expectStatus(await query(viewer, 'Shot', { filters: f }), 200, 'depth 8'))).toEqual(['sh020', 'sh030']);
    const nine = [{ filter_operator: 'all', filters: f }];
    expectValidation(await query(viewer, 'Shot', { filters: nine }), ['body', 'filters', 0, 'filters', 0]);

    const mine = expectStatus(await query(viewer, 'Task', { filters: [['assignees', 'is', { type: 'User', id: artist.user.id }]] }), 200);
    expect(mine.items.map((r: any) => r.id).sort()).toEqual([tasks.a.id, tasks.c.id].sort());
    const any = {
      filter_operator: 'any',
      filters: [
        ['code', 'is', 'sh030'],
        {
          filter_operator: 'all',
          filters: [
            ['cut_in', 'less_than', 1005],
            ['code', 'starts_with', 'SH'],
          ],
        },
      ],
    };
    expect(names(expectStatus(await query(viewer, 'Shot', { filters: any }), 200))).toEqual(['sh010', 'sh030']);
  });

  it('keyset pages with fields, order and total; a cursor from another order is refused', async () => {
    const body = { filters: [], fields: ['code'], order: [{ field: 'cut_in', direction: 'desc' }], limit: 2, include_total: true };
    const first = expectStatus(await query(viewer, 'Shot', body), 200, 'page 1');
    expect(first.items.map((r: any) => r.data)).toEqual([{ code: 'sh030' }, { code: 'sh020' }]);
    expect(first.total).toBe(3);
    const second = expectStatus(await query(viewer, 'Shot', { ...body, cursor: first.next_cursor }), 200, 'page 2');
    expect(second.items.map((r: any) => r.data)).toEqual([{ code: 'sh010' }]);
    expect(second.next_cursor).toBeNull();
    expectValidation(await query(viewer, 'Shot', { filters: [], cursor: first.next_cursor }), ['body', 'cursor']);
    const plain = expectStatus(await query(viewer, 'Shot', { filters: [] }), 200);
    expect(plain.total).toBeUndefined();
    // Each item is the record exactly as a read of it answers (the client form written by PostgreSQL).
    for (const item of plain.items as any[]) expect(item).toEqual(expectStatus(await viewer.api.get(`/entities/Shot/${item.id}`), 200));
  });

  it('retired records: never returned, Admins may include them, anyone else asking is 403', async () => {
    const gone = await create(artist, 'Shot', { project_id: projectId, data: { code: 'gone' } });
    expectStatus(await artist.api.delete(`/entities/Shot/${gone.id}`), 200, 'retire');
    expect(names(expectStatus(await query(viewer, 'Shot', { filters: [['code', 'is', 'gone']] }), 200))).toEqual([]);
    expect(names(expectStatus(await query(admin, 'Shot', { filters: [['code', 'is', 'gone']], include_retired: true }), 200))).toEqual(['gone']);
    expectError(await query(artist, 'Shot', { filters: [], include_retired: true }), 403, 'forbidden');
  });

  it('hostile values only match or not; the table is untouched and nothing answers 5xx', async () => {
    // 1 MiB of varied letters: as many distinct trigrams as a text can have, past LIKE_MAX_CHARS.
    let seed = 1;
    const mib = Array.from({ length: 1 << 20 }, () => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return String.fromCharCode(97 + ((seed >>> 24) % 26));
    }).join('');
    for (const v of ["'; DROP TABLE record; --", "' OR '1'='1", '\\', '%', '_', '$1', '?', 'é😀', 'x'.repeat(200_000), mib]) {
      for (const f of [[['code', 'is', v]], [['code', 'contains', v]], [['sequence.Sequence.code', 'in', [v]]]]) {
        const res = expectStatus(await query(viewer, 'Shot', { filters: f }), 200, `hostile ${v.slice(0, 20)}`);
        expect(res.items).toEqual([]);
      }
    }
    expect(names(expectStatus(await query(viewer, 'Shot', { filters: [] }), 200))).toEqual(['sh010', 'sh020', 'sh030']);
    expectValidation(await query(viewer, 'Shot', { filters: [['cut_in', 'is', '1001']] }), ['body', 'filters', 0, 2]);
  });

  it('malformed requests are 422 located inside the body; an unknown type 404', async () => {
    expectValidation(
      await query(viewer, 'Task', {
        filters: [
          ['name', 'is', 'x'],
          ['nope', 'is', 1],
        ],
      }),
      ['body', 'filters', 1, 0],
    );
    expectValidation(await query(viewer, 'Task', { filters: [['name', 'between', 'a', 'b']] }), ['body', 'filters', 0, 1]);
    expectValidation(await query(viewer, 'Task', { filters: [['name.Shot.code', 'is', 'x']] }), ['body', 'filters', 0, 0]);
    expectValidation(await query(viewer, 'Task', { filters: [['entity.Nope.code', 'is', 'x']] }), ['body', 'filters', 0, 0]);
    expectValidation(await query(viewer, 'Task', { filters: [['entity.Shot.sequence.Sequence.code.Shot.code.Shot.code.Shot.code', 'is', 'x']] }), [
      'body',
      'filters',
      0,
      0,
    ]);
    expectValidation(await query(viewer, 'Task', { filters: [['name', 'is']] }), ['body', 'filters', 0]);
    expectValidation(await query(viewer, 'Task', { filters: [], limit: 1001 }), ['body', 'limit']);
    expectValidation(await query(viewer, 'Task', { filters: [], nope: 1 }), ['body', 'nope']);
    expectValidation(await query(viewer, 'Task', {}), ['body', 'filters']);
    expectValidation(await query(viewer, 'Task', { filters: [], order: [{ field: 'assignees' }] }), ['body', 'order', 0, 'field']);
    expectError(await query(viewer, 'Nope', { filters: [] }), 404, 'not_found');
  });
});
