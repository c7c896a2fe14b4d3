/**
 * QueryRecords against the real PostgreSQL: operators on stored records, 1-, 2- and 4-hop
 * traversal, multi_link any-match, the null rules of negative operators, hostile values that only
 * ever match or not, projection, order, totals, retired records (Admin only), malformed requests
 * located, and 10,000 records paged while another client inserts into the same result set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf } from '@reelbase/lib-testkit';
import type { recordsv1 } from '@reelbase/proto';
import type pg from 'pg';
import { LIKE_MAX_CHARS } from '../src/core/domain/filter.operators.js';
import { querySnapshot, startRecordsWorld, text, type RecordsWorld } from './records.world.js';

type Client = GrpcClient<recordsv1.RecordsServiceClient>;

const asAdmin: CallContext = { requestId: 'q-admin', principal: { userId: newId(), role: 'Admin', authKind: 'token' } };
const asViewer: CallContext = { requestId: 'q-viewer', principal: { userId: newId(), role: 'Viewer', authKind: 'token' } };
const asArtist: CallContext = { requestId: 'q-artist', principal: { userId: newId(), role: 'Artist', authKind: 'token' } };
const asService: CallContext = { requestId: 'q-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };

let w: RecordsWorld;
let sql: pg.Client;
let client: Client;

const SNAPSHOT = querySnapshot([
  { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
  { code: 'User', project_scoped: false, fields: [text('name')] },
  { code: 'Sequence', project_scoped: true, fields: [text('code')] },
  {
    code: 'Shot',
    project_scoped: true,
    fields: [
      text('code'),
      text('description'),
      { code: 'sequence', type: 'link', link_types: ['Sequence'] },
      { code: 'parent', type: 'link', link_types: ['Shot'] },
      { code: 'cut_in', type: 'integer' },
      { code: 'ratio', type: 'float' },
      { code: 'hero', type: 'boolean' },
      { code: 'due', type: 'date' },
      { code: 'at', type: 'datetime' },
      { code: 'tags', type: 'multi_enum', options: [{ code: 'red' }, { code: 'blue' }] },
      { code: 'kind', type: 'enum', options: [{ code: 'vfx' }, { code: 'plate' }] },
    ],
  },
  {
    code: 'Task',
    project_scoped: true,
    fields: [text('name'), { code: 'entity', type: 'link', link_types: ['Shot', 'Sequence'] }, { code: 'assignees', type: 'multi_link', link_types: ['User'] }],
  },
]);

const create = (entityType: string, projectId: string | undefined, data: Record<string, unknown>, status?: string) =>
  client.call.createRecord({ entityType, projectId, status, dataJson: JSON.stringify(data) }, asAdmin).then((r) => r.record!);
const link = (r: recordsv1.Record) => ({ type: r.entityType, id: r.id });

interface Q {
  filters?: unknown;
  fields?: unknown;
  order?: { field: string; direction?: string }[];
  limit?: number;
  cursor?: string;
  includeTotal?: boolean;
  includeRetired?: boolean;
}
const query = (entityType: string, q: Q, ctx: CallContext = asViewer) =>
  client.call.queryRecords(
    {
      entityType,
      filtersJson: q.filters === undefined ? undefined : JSON.stringify(q.filters),
      fieldsJson: q.fields === undefined ? undefined : JSON.stringify(q.fields),
      order: (q.order ?? []).map((o) => ({ field: o.field, direction: o.direction ?? '' })),
      limit: q.limit,
      cursor: q.cursor,
      includeTotal: q.includeTotal ?? false,
      includeRetired: q.includeRetired ?? false,
      answerJson: false,
    },
    ctx,
  );
const codes = async (entityType: string, filters: unknown, field = 'code') =>
  (await query(entityType, { filters, limit: 1000 })).items.map((r) => JSON.parse(r.dataJson)[field] as string).sort();

let project: recordsv1.Record;
let sq10: recordsv1.Record;
let ann: recordsv1.Record;
let bob: recordsv1.Record;
const shots: Record<string, recordsv1.Record> = {};

beforeAll(async () => {
  w = await startRecordsWorld('query', { OUTBOX_POLL_MS: '200' });
  ({ sql, client } = w);
  await client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);

  project = await create('Project', undefined, { name: 'Q', code: 'q' });
  const P = project.id;
  sq10 = await create('Sequence', P, { code: 'SQ010' });
  const sq20 = await create('Sequence', P, { code: 'SQ020' });
  ann = await create('User', undefined, { name: 'Ann Lee' });
  bob = await create('User', undefined, { name: 'Bob' });
  const today = new Date();
  const day = (offset: number) => new Date(today.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  shots.a = await create(
    'Shot',
    P,
    {
      code: 'A',
      sequence: link(sq10),
      cut_in: 10,
      ratio: 0.5,
      hero: true,
      due: day(2),
      at: new Date(Date.now() - 3_600_000).toISOString(),
      tags: ['red'],
      kind: 'vfx',
      description: "it's 100% done_ok",
    },
    'ip',
  );
  shots.b = await create(
    'Shot',
    P,
    { code: 'B', sequence: link(sq10), parent: link(shots.a), cut_in: 20, ratio: 1.5, hero: false, due: day(20), tags: ['red', 'blue'], kind: 'plate' },
    'wtg',
  );
  shots.c = await create('Shot', P, { code: 'C', sequence: link(sq20), parent: link(shots.b), cut_in: 30, due: day(-3), tags: [] }, 'fin');
  shots.d = await create('Shot', P, { code: 'D', parent: link(shots.c), description: 'back\\slash é 😀' });
  shots.e = await create('Shot', P, {}); // nothing set at all
  await create('Task', P, { name: 'comp A', entity: link(shots.a), assignees: [link(ann)] });
  await create('Task', P, { name: 'comp B', entity: link(shots.b), assignees: [link(bob), link(ann)] });
  await create('Task', P, { name: 'comp D', entity: link(shots.d), assignees: [] });
  await create('Task', P, { name: 'seq task', entity: link(sq20) });
}, 60_000);

afterAll(async () => {
  await w?.stop();
});

describe('QueryRecords: operators on stored records', () => {
  it('equality, membership and the null rules of negative operators', async () => {
    expect(await codes('Shot', [['code', 'is', 'A']])).toEqual(['A']);
    expect(await codes('Shot', [['code', 'is_not', 'A']])).toEqual(['B', 'C', 'D', undefined].sort());
    expect(await codes('Shot', [['code', 'is', null]])).toEqual([undefined]);
    expect(await codes('Shot', [['code', 'in', ['A', 'C']]])).toEqual(['A', 'C']);
    expect(await codes('Shot', [['code', 'in', []]])).toEqual([]);
    expect((await codes('Shot', [['code', 'not_in', []]])).length).toBe(5);
    expect(await codes('Shot', [['code', 'not_in', ['A', 'B']]])).toEqual(['C', 'D', undefined].sort());
    expect(await codes('Shot', [['status', 'is', 'ip']])).toEqual(['A']);
    expect(await codes('Shot', [['status', 'is_not', 'ip']])).toEqual(['B', 'C', 'D', undefined].sort());
    expect(await codes('Shot', [['hero', 'is', false]])).toEqual(['B']);
    expect(await codes('Shot', [['kind', 'in', ['vfx', 'plate']]])).toEqual(['A', 'B']);
    expect(await codes('Shot', [['id', 'is', shots.c!.id.toUpperCase()]])).toEqual(['C']);
  });

  it('numbers, dates and datetimes compare, between is inclusive, in_last / in_next are windows', async () => {
    expect(await codes('Shot', [['cut_in', 'greater_than', 10]])).toEqual(['B', 'C']);
    expect(await codes('Shot', [['cut_in', 'between', 10, 20]])).toEqual(['A', 'B']);
    expect(await codes('Shot', [['cut_in', 'not_between', 10, 20]])).toEqual(['C', 'D', undefined].sort());
    expect(await codes('Shot', [['ratio', 'less_or_equal', 0.5]])).toEqual(['A']);
    expect(await codes('Shot', [['due', 'in_next', 7, 'DAY']])).toEqual(['A']);
    expect(await codes('Shot', [['due', 'in_last', 1, 'WEEK']])).toEqual(['C']);
    expect(await codes('Shot', [['due', 'in_next', 1, 'MONTH']])).toEqual(['A', 'B']);
    expect(await codes('Shot', [['at', 'in_last', 2, 'HOUR']])).toEqual(['A']);
    expect(await codes('Shot', [['at', 'in_next', 2, 'HOUR']])).toEqual([]);
    expect(await codes('Shot', [['due', 'in_last', 10_000, 'MONTH']])).toEqual(['C']);
    expect(await codes('Shot', [['at', 'in_next', 10_000, 'HOUR']])).toEqual([]);
    expect(await codes('Shot', [['created_at', 'in_last', 1, 'HOUR']])).toHaveLength(5);
    expect(await codes('Shot', [['code', 'less_than', 'B']])).toEqual(['A']);
  });

  it('text operators are case-insensitive substrings with wildcards taken literally', async () => {
    expect(await codes('Shot', [['description', 'contains', "IT'S 100%"]])).toEqual(['A']);
    expect(await codes('Shot', [['description', 'contains', '0%_']])).toEqual([]);
    expect(await codes('Shot', [['description', 'contains', 'done_ok']])).toEqual(['A']);
    expect(await codes('Shot', [['description', 'contains', '_']])).toEqual(['A']);
    expect(await codes('Shot', [['description', 'starts_with', 'back\\']])).toEqual(['D']);
    expect(await codes('Shot', [['description', 'ends_with', 'é 😀']])).toEqual(['D']);
    expect(await codes('Shot', [['description', 'not_contains', 'back']])).toEqual(['A', 'B', 'C', undefined].sort());
  });

  it('multi_enum and multi_link match any element; type_is looks at the linked type', async () => {
    expect(await codes('Shot', [['tags', 'is', 'red']])).toEqual(['A', 'B']);
    expect(await codes('Shot', [['tags', 'is', 'blue']])).toEqual(['B']);
    expect(await codes('Shot', [['tags', 'is_not', 'red']])).toEqual(['C', 'D', undefined].sort());
    expect(await codes('Shot', [['tags', 'is', null]])).toEqual(['C', 'D', undefined].sort());
    expect(await codes('Task', [['assignees', 'is', link(ann)]], 'name')).toEqual(['comp A', 'comp B']);
    expect(await codes('Task', [['assignees', 'in', [link(bob)]]], 'name')).toEqual(['comp B']);
    expect(await codes('Task', [['assignees', 'is', null]], 'name')).toEqual(['comp D', 'seq task']);
    expect(await codes('Task', [['entity', 'type_is', 'Sequence']], 'name')).toEqual(['seq task']);
    expect(await codes('Task', [['entity', 'type_is_not', 'Sequence']], 'name')).toEqual(['comp A', 'comp B', 'comp D']);
  });

  it('nested any/all groups', async () => {
    const f = {
      filter_operator: 'any',
      filters: [
        ['code', 'is', 'A'],
        {
          filter_operator: 'all',
          filters: [
            ['cut_in', 'greater_than', 10],
            ['status', 'is', 'fin'],
          ],
        },
      ],
    };
    expect(await codes('Shot', f)).toEqual(['A', 'C']);
  });
});

describe('QueryRecords: link traversal', () => {
  it('one, two and four hops; multi_link hops match when any linked record matches', async () => {
    expect(await codes('Shot', [['sequence.Sequence.code', 'is', 'SQ010']])).toEqual(['A', 'B']);
    expect(await codes('Task', [['entity.Shot.sequence.Sequence.code', 'is', 'SQ010']], 'name')).toEqual(['comp A', 'comp B']);
    // comp D → D → parent C → parent B → sequence SQ010 (comp B → B → A, which has no parent)
    expect(await codes('Task', [['entity.Shot.parent.Shot.parent.Shot.sequence.Sequence.code', 'is', 'SQ010']], 'name')).toEqual(['comp D']);
    const five = await appErrorOf(query('Task', { filters: [['entity.Shot.parent.Shot.parent.Shot.parent.Shot.sequence.Sequence.code', 'is', 'SQ010']] }));
    expect(five.problems.map((p) => p.loc)).toEqual([['filters', 0, 0]]);
    expect(await codes('Task', [['assignees.User.name', 'contains', 'ann']], 'name')).toEqual(['comp A', 'comp B']);
    expect(await codes('Task', [['assignees.User.name', 'is', 'Bob']], 'name')).toEqual(['comp B']);
    expect(await codes('Task', [['entity.Shot.code', 'is_not', 'A']], 'name')).toEqual(['comp B', 'comp D', 'seq task']);
  });

  it('a hop never reaches a retired record', async () => {
    const extra = await create('Sequence', project.id, { code: 'SQ099' });
    const shot = await create('Shot', project.id, { code: 'Z', sequence: link(extra) });
    expect(await codes('Shot', [['sequence.Sequence.code', 'is', 'SQ099']])).toEqual(['Z']);
    await client.call.retireRecord({ entityType: 'Sequence', id: extra.id }, asAdmin);
    expect(await codes('Shot', [['sequence.Sequence.code', 'is', 'SQ099']])).toEqual([]);
    await client.call.retireRecord({ entityType: 'Shot', id: shot.id }, asAdmin);
  });
});

describe('QueryRecords: hostile values only match or not', () => {
  const hostile = [
    "'",
    "''",
    "'; DROP TABLE record; --",
    "'); DROP TABLE records.record; --",
    '\\',
    '\\\\x',
    '%',
    '_',
    '$1',
    '?',
    '??',
    '\u0000x',
    'é😀\u202e',
    '{"a":1}',
    '42',
    'x'.repeat(1_000_000),
  ];
  it.each(hostile.map((h) => [h.length > 50 ? `${h.length} chars` : JSON.stringify(h), h]))('%s', async (_name, h) => {
    const before = (await sql.query('select count(*)::int as n from records.record')).rows[0].n;
    for (const f of [
      [['code', 'is', h]],
      [['code', 'contains', h]],
      [['code', 'not_in', [h, 'A']]],
      [['description', 'starts_with', h]],
      [['sequence.Sequence.code', 'ends_with', h]],
      [['status', 'greater_than', h]],
    ]) {
      if (h.includes('\u0000')) {
        // A NUL character cannot be stored or compared by PostgreSQL: refused as a client mistake, located.
        const e = await appErrorOf(query('Shot', { filters: f }));
        expect(e.kind).toBe('invalid');
        expect(e.problems[0]!.loc.slice(0, 3)).toEqual(['filters', 0, 2]);
        continue;
      }
      const res = await query('Shot', { filters: f });
      expect(res.items.length).toBeLessThanOrEqual(6);
    }
    expect((await sql.query('select count(*)::int as n from records.record')).rows[0].n).toBe(before);
  });

  it('values past LIKE_MAX_CHARS match as ILIKE would: case-insensitive, % and _ literal, not_contains its negation', async () => {
    const unit = 'Ab%_cD\\é';
    const long = unit.repeat(Math.ceil((LIKE_MAX_CHARS * 1.5) / unit.length));
    const shot = await create('Shot', project.id, { code: 'LONG1', description: `head-${long}-tail` });
    const other = await create('Shot', project.id, { code: 'LONG2', description: `head-${long.replace(/%/g, 'x')}-tail` });
    const middle = long.slice(3, LIKE_MAX_CHARS + 300).toUpperCase();
    expect(middle.length).toBeGreaterThan(LIKE_MAX_CHARS);
    const sortedIds = (rows: recordsv1.Record[]) => rows.map((r) => r.id).sort();
    const found = async (filters: unknown) =>
      sortedIds((await query('Shot', { filters, limit: 1000 })).items).filter((id) => id === shot.id || id === other.id);
    expect(await found([['description', 'contains', middle]])).toEqual([shot.id]);
    expect(await found([['description', 'starts_with', `HEAD-${long}`.slice(0, LIKE_MAX_CHARS + 10)]])).toEqual([shot.id]);
    expect(await found([['description', 'ends_with', `${long}-TAIL`.slice(-(LIKE_MAX_CHARS + 10))]])).toEqual([shot.id]);
    expect(await found([['description', 'not_contains', middle]])).toEqual([other.id]);
    // One character past the text: nothing.
    expect(await found([['description', 'contains', `x${long}`]])).toEqual([]);
    // The same searches just under the limit take the ILIKE path and agree.
    const short = middle.slice(0, LIKE_MAX_CHARS);
    expect(await found([['description', 'contains', short]])).toEqual([shot.id]);
    expect(await found([['description', 'not_contains', short]])).toEqual([other.id]);
    // The other tests of this file count the Shots they made.
    await sql.query('delete from records.record where id = any($1::uuid[])', [[shot.id, other.id]]);
  });

  it('numbers as strings are a located 422 on number fields and plain text on text fields', async () => {
    const e = await appErrorOf(query('Shot', { filters: [['cut_in', 'is', '10']] }));
    expect(e.kind).toBe('invalid');
    expect(e.problems[0]!.loc).toEqual(['filters', 0, 2]);
    expect(await codes('Shot', [['code', 'is', '10']])).toEqual([]);
  });
});

describe('QueryRecords: request shape', () => {
  it('fields projects data; order on columns and data fields; include_total counts every match', async () => {
    const res = await query('Shot', {
      filters: [['cut_in', 'greater_than', 0]],
      fields: ['code'],
      order: [{ field: 'cut_in', direction: 'desc' }],
      includeTotal: true,
      limit: 2,
    });
    expect(res.items.map((r) => JSON.parse(r.dataJson))).toEqual([{ code: 'C' }, { code: 'B' }]);
    expect(res.total).toBe(3);
    expect(res.nextCursor).toBeTruthy();
    const next = await query('Shot', {
      filters: [['cut_in', 'greater_than', 0]],
      fields: ['code'],
      order: [{ field: 'cut_in', direction: 'desc' }],
      includeTotal: true,
      limit: 2,
      cursor: res.nextCursor,
    });
    expect(next.items.map((r) => JSON.parse(r.dataJson))).toEqual([{ code: 'A' }]);
    expect(next.nextCursor).toBeUndefined();
    const byCode = await query('Shot', { order: [{ field: 'code' }] });
    expect(byCode.items.map((r) => JSON.parse(r.dataJson).code)).toEqual(['A', 'B', 'C', 'D', undefined]);
    const byStatus = await query('Shot', { order: [{ field: 'status', direction: 'desc' }], limit: 1 });
    expect(byStatus.items[0]!.status).toBeUndefined(); // nulls first when descending
  });

  it('retired records are never returned, unless an Admin asks; anyone else asking is 403', async () => {
    const gone = await create('Shot', project.id, { code: 'GONE' });
    await client.call.retireRecord({ entityType: 'Shot', id: gone.id }, asAdmin);
    expect(await codes('Shot', [['code', 'is', 'GONE']])).toEqual([]);
    const admin = await query('Shot', { filters: [['code', 'is', 'GONE']], includeRetired: true }, asAdmin);
    expect(admin.items.map((r) => r.id)).toEqual([gone.id]);
    expect((await appErrorOf(query('Shot', { includeRetired: true }, asArtist))).kind).toBe('forbidden');
  });

  it('malformed requests are one invalid error locating every problem', async () => {
    const e = await appErrorOf(
      query('Shot', {
        filters: [
          ['nope', 'is', 1],
          ['code', 'between', 'a', 'b'],
          ['sequence.Shot.code', 'is', 'x'],
          ['code.Sequence.code', 'is', 'x'],
        ],
        fields: ['code', 'nope'],
        order: [{ field: 'tags' }, { field: 'code', direction: 'up' }],
        limit: 1001,
        cursor: 'not a cursor',
      }),
    );
    expect(e.kind).toBe('invalid');
    expect(e.problems.map((p) => p.loc)).toEqual([
      ['filters', 0, 0],
      ['filters', 1, 1],
      ['filters', 2, 0],
      ['filters', 3, 0],
      ['fields', 1],
      ['order', 0, 'field'],
      ['order', 1, 'direction'],
      ['limit'],
      ['cursor'],
    ]);
    expect((await appErrorOf(query('Shot', { limit: 0 }))).problems[0]!.loc).toEqual(['limit']);
    expect((await appErrorOf(query('Nope', {}))).kind).toBe('not_found');
    const other = await query('Shot', { limit: 1, order: [{ field: 'code' }] });
    expect((await appErrorOf(query('Shot', { limit: 1, cursor: other.nextCursor }))).problems[0]!.loc).toEqual(['cursor']);
  });
});

describe('QueryRecords: keyset pages under concurrent inserts', () => {
  it('paging 10,000 records while another client inserts returns each pre-existing one exactly once, in order', async () => {
    await sql.query(
      `insert into records.record (id, entity_type, project_id, created_at, updated_at, data)
       select gen_random_uuid(), 'Shot', $1, now(), now(), jsonb_build_object('code', 'bulk' || g, 'cut_in', g % 97)
         from generate_series(1, 10000) g`,
      [project.id],
    );
    const before = new Set<string>(
      (await sql.query(`select id from records.record where entity_type = 'Shot' and retired_at is null`)).rows.map((r: { id: string }) => r.id),
    );
    for (const order of [undefined, [{ field: 'cut_in', direction: 'desc' }]] as const) {
      let stop = false;
      let inserted = 0;
      const writer = (async () => {
        // 20 rows every 10 ms at most, up to 5,000: enough to land between and ahead of every page,
        // bounded so the walk ends however slow the machine is.
        while (!stop && inserted < 5000) {
          await new Promise((r) => setTimeout(r, 10));
          await sql.query(
            `insert into records.record (id, entity_type, project_id, created_at, updated_at, data)
             select gen_random_uuid(), 'Shot', $1, now(), now(), jsonb_build_object('code', 'late', 'cut_in', (random() * 100)::int) from generate_series(1, 20)`,
            [project.id],
          );
          inserted += 20;
        }
      })();
      const seen = new Map<string, number>();
      const sequence: recordsv1.Record[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const res = await query('Shot', { limit: 1000, cursor, order: order ? [...order] : undefined });
        for (const r of res.items) {
          seen.set(r.id, (seen.get(r.id) ?? 0) + 1);
          sequence.push(r);
        }
        cursor = res.nextCursor;
        pages += 1;
      } while (cursor && pages < 100);
      stop = true;
      await writer;
      expect(inserted).toBeGreaterThan(0);
      for (const id of before) expect(seen.get(id), id).toBe(1);
      for (const n of seen.values()) expect(n).toBe(1);
      // In order: ids ascending by default; cut_in descending (nulls first) then id.
      if (!order) {
        const ids = sequence.map((r) => r.id);
        expect([...ids].sort()).toEqual(ids);
      } else {
        const cuts = sequence.map((r) => JSON.parse(r.dataJson).cut_in as number | undefined);
        const firstNumber = cuts.findIndex((c) => c !== undefined);
        expect(cuts.slice(0, firstNumber).every((c) => c === undefined)).toBe(true);
        const nums = cuts.slice(firstNumber) as number[];
        for (let i = 1; i < nums.length; i++) expect(nums[i]).toBeLessThanOrEqual(nums[i - 1]!);
      }
    }
  }, 120_000);
});
