/**
 * The innermost-first link hops against the real PostgreSQL (docs/queries.md, "Link hops and the
 * link table"): every hop filter of a table (1, 2 and 4 hops, link and multi_link, negative
 * operators, nulls, `any` groups, include_retired, a pinned project, ids past the cap) answers
 * exactly the ids and the total of its EXISTS form, over randomized data full of dead, retired,
 * mistyped and malformed links.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor, planQuery, type PlanOptions, type QueryInput } from '../src/core/domain/record.query.js';
import { compileSchema } from '../src/kernel/domain/schema.snapshot.js';
import { runQueryPlan, type Statement } from '../src/core/store/query.repository.js';
import { newId } from '@reelbase/lib-platform';
import { asAdmin, SNAPSHOT, sql, client, expectedLinks, storedLinks, insert, useLinkTableWorld } from './link.table.world.js';

useLinkTableWorld();

const schema = compileSchema(1, SNAPSHOT);
/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('link hops answer exactly what their EXISTS form answers', () => {
  const projects: string[] = [];

  beforeAll(async () => {
    const rnd = prng(20260101);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const chance = (p: number) => rnd() < p;
    for (const code of ['p1', 'p2', 'p3']) projects.push(await insert('Project', null, { name: code, code }));
    const users: string[] = [];
    for (let i = 0; i < 8; i++) users.push(await insert('User', null, { name: pick(['Ann', 'Bob', 'Cy', 'Dee']) }, i === 7));
    const ghost = newId(); // linked, never stored
    /** A link value to `ids` (of `type`), sometimes broken in one of the ways stored data can be. */
    const linkTo = (type: string, ids: string[]): unknown => {
      const r = rnd();
      if (r < 0.06) return null;
      if (r < 0.1) return { type, id: 'not-a-uuid' };
      if (r < 0.13) return { type, id: ghost };
      if (r < 0.16) return [{ type, id: pick(ids) }]; // a list where one link belongs
      if (r < 0.19) return { type: 'User', id: pick(users) }; // another type's record
      return { type, id: pick(ids) };
    };
    const multiTo = (type: string, ids: string[]): unknown => {
      const r = rnd();
      if (r < 0.08) return null;
      if (r < 0.12) return { type, id: pick(ids) }; // one link where a list belongs
      const n = Math.floor(rnd() * 4);
      return Array.from({ length: n }, () => (chance(0.1) ? { type, id: 'x' } : { type, id: pick(ids) }));
    };
    const sequences: string[] = [];
    const shots: string[] = [];
    for (const p of projects) {
      for (let i = 0; i < 6; i++) {
        const data: Record<string, unknown> = { code: pick(['SQ010', 'SQ020', 'SQ030']) };
        if (chance(0.7)) data.owner = linkTo('User', users);
        sequences.push(await insert('Sequence', p, data, chance(0.15)));
      }
    }
    for (let i = 0; i < 60; i++) {
      const p = pick(projects);
      const data: Record<string, unknown> = { code: pick(['A', 'B', 'C', 'ab']), cut_in: pick([1, 10, 100, null]) };
      if (chance(0.85)) data.sequence = linkTo('Sequence', sequences);
      if (chance(0.5) && shots.length > 0) data.parent = linkTo('Shot', shots);
      if (chance(0.6)) data.watchers = multiTo('User', users);
      if (chance(0.05)) delete data.code;
      shots.push(await insert('Shot', p, data, chance(0.12)));
    }
    for (let i = 0; i < 150; i++) {
      const p = pick(projects);
      const data: Record<string, unknown> = { name: pick(['comp', 'anim', 'light']) };
      if (chance(0.9)) data.entity = chance(0.8) ? linkTo('Shot', shots) : linkTo('Sequence', sequences);
      if (chance(0.7)) data.assignees = multiTo('User', users);
      await insert('Task', p, data, chance(0.1));
    }
    for (let i = 0; i < 60; i++) {
      const data: Record<string, unknown> = { content: pick(['x', 'y']) };
      if (chance(0.9)) data.links = multiTo(pick(['Shot', 'Sequence', 'Task']), chance(0.5) ? shots : sequences);
      await insert('Note', pick(projects), data, chance(0.1));
    }
    await sql.query('analyze records.record');
    await sql.query('analyze records.record_link');
  }, 60_000);

  /** Ids (in order) and total of a query run with the given plan options; and the statements it ran. */
  async function answer(type: string, filters: unknown, options: PlanOptions, includeRetired = false) {
    const input: QueryInput = { entityType: type, filtersJson: JSON.stringify(filters), limit: 1000, includeTotal: true, includeRetired };
    const { plan } = planQuery(schema, input, options);
    const trace: Statement[] = [];
    const out = await runQueryPlan(sql, { ...plan, limit: plan.limit + 1 }, trace);
    return { ids: out.rows.map((r) => JSON.parse(r.json).id as string), total: out.total, hops: plan.ctes !== undefined, statements: trace.length };
  }

  const P = () => projects[0]!;
  type Case = [name: string, type: string, filters: () => unknown, includeRetired?: boolean];
  const cases: Case[] = [];
  const paths: [string, string, string[]][] = [
    // [queried type, path, values for is / contains]
    ['Task', 'entity.Shot.code', ['A', 'ab', 'Z']],
    ['Task', 'entity.Sequence.code', ['SQ010', 'SQ030']],
    ['Task', 'entity.Shot.sequence.Sequence.code', ['SQ010', 'SQ020', 'SQ030']],
    ['Task', 'entity.Shot.parent.Shot.sequence.Sequence.owner.User.name', ['Ann', 'Bob']],
    ['Task', 'entity.Shot.watchers.User.name', ['Ann', 'Cy']],
    ['Task', 'assignees.User.name', ['Ann', 'Dee']],
    ['Note', 'links.Shot.sequence.Sequence.code', ['SQ020']],
    ['Note', 'links.Sequence.code', ['SQ030']],
    ['Shot', 'parent.Shot.parent.Shot.code', ['A', 'B']],
    ['Shot', 'sequence.Sequence.owner.User.name', ['Bob']],
  ];
  for (const [type, path, values] of paths) {
    const v = values[0]!;
    cases.push([`${type} ${path} is ${v}`, type, () => [[path, 'is', v]]]);
    cases.push([`${type} ${path} in`, type, () => [[path, 'in', values]]]);
    cases.push([`${type} ${path} in with null`, type, () => [[path, 'in', [...values, null]]]]);
    cases.push([`${type} ${path} is null`, type, () => [[path, 'is', null]]]);
    cases.push([`${type} ${path} is_not null`, type, () => [[path, 'is_not', null]]]);
    cases.push([`${type} ${path} is_not`, type, () => [[path, 'is_not', v]]]);
    cases.push([`${type} ${path} not_in`, type, () => [[path, 'not_in', values]]]);
    cases.push([`${type} ${path} contains`, type, () => [[path, 'contains', v.slice(0, 1).toLowerCase()]]]);
    cases.push([`${type} ${path} not_contains`, type, () => [[path, 'not_contains', v.slice(0, 1)]]]);
    cases.push([`${type} ${path} in []`, type, () => [[path, 'in', []]]]);
    cases.push([
      `${type} ${path} pinned project`,
      type,
      () => [
        ['project_id', 'is', P()],
        [path, 'is', v],
      ],
    ]);
    cases.push([
      `${type} ${path} pinned project in an all group`,
      type,
      () => [{ filter_operator: 'all', filters: [['project_id', 'is', P()]] }, [path, 'in', values]],
    ]);
    cases.push([
      `${type} ${path} in an any group`,
      type,
      () => [
        {
          filter_operator: 'any',
          filters: [
            [path, 'is', v],
            ['status', 'is', 'fin'],
          ],
        },
      ],
    ]);
    cases.push([
      `${type} ${path} in an all group`,
      type,
      () => ({ filter_operator: 'all', filters: [{ filter_operator: 'all', filters: [[path, 'is', v]] }] }),
    ]);
    cases.push([`${type} ${path} include_retired`, type, () => [[path, 'is', v]], true]);
    cases.push([
      `${type} ${path} two hop conditions`,
      type,
      () => [
        [path, 'is', v],
        [path, 'is_not', values[1] ?? 'Z'],
      ],
    ]);
  }
  cases.push(['Task entity.Shot.sequence type_is', 'Task', () => [['entity.Shot.sequence', 'type_is', 'Sequence']]]);
  cases.push(['Task entity.Shot.sequence type_is_not', 'Task', () => [['entity.Shot.sequence', 'type_is_not', 'Sequence']]]);
  cases.push(['Task entity.Shot.cut_in greater_than', 'Task', () => [['entity.Shot.cut_in', 'greater_than', 5]]]);
  cases.push(['Task entity.Shot.cut_in between', 'Task', () => [['entity.Shot.cut_in', 'between', 1, 10]]]);
  cases.push(['Task entity.Shot.status is', 'Task', () => [['entity.Shot.status', 'is', 'ip']]]);
  cases.push([
    'Task two chains, pinned',
    'Task',
    () => [
      ['project_id', 'is', P()],
      ['entity.Shot.code', 'is', 'A'],
      ['assignees.User.name', 'in', ['Ann', 'Bob']],
    ],
  ]);
  cases.push([
    'Task pinned to another project inside',
    'Task',
    () => [
      ['project_id', 'is', P()],
      ['project_id', 'is', projects[1]!],
      ['entity.Shot.code', 'is', 'A'],
    ],
  ]);
  cases.push(['Task pinned under any', 'Task', () => [{ filter_operator: 'any', filters: [['project_id', 'is', P()]] }, ['entity.Shot.code', 'is', 'A']]]);

  it.each(cases)('%s', async (_name, type, filters, includeRetired) => {
    const f = filters();
    const exists = await answer(type, f, { linkHops: false }, includeRetired);
    const linked = await answer(type, f, {}, includeRetired);
    const capped = await answer(type, f, { hopCap: 3 }, includeRetired);
    expect(exists.hops).toBe(false);
    expect(linked.ids).toEqual(exists.ids);
    expect(linked.total).toBe(exists.total);
    expect(capped.ids).toEqual(exists.ids);
    expect(capped.total).toBe(exists.total);
  });

  it('one INSERT of many rows writes the link rows of each live row it inserted, and only those', async () => {
    const [target, task, retiredTask, note] = [newId(), newId(), newId(), newId()];
    const taskData = JSON.stringify({ entity: { type: 'User', id: target }, assignees: [{ type: 'User', id: target.toUpperCase() }] });
    await sql.query(
      `insert into records.record (id, entity_type, project_id, status, created_at, updated_at, data, retired_at) values
         ($1, 'User', null, 'ip', now(), now(), '{"name":"T"}', null),
         ($2, 'Task', null, 'ip', now(), now(), $5::jsonb, null),
         ($3, 'Task', null, 'ip', now(), now(), $5::jsonb, now()),
         ($4, 'Note', null, 'ip', now(), now(), $6::jsonb, null)`,
      [
        target,
        task,
        retiredTask,
        note,
        taskData,
        JSON.stringify({
          links: [
            { type: 'User', id: target },
            { type: 'User', id: target },
          ],
        }),
      ],
    );
    const stored = await storedLinks();
    expect(stored).toEqual(await expectedLinks());
    expect(stored.filter((r) => [task, retiredTask, note].some((id) => r.startsWith(id)))).toEqual(
      [`${task} Task.entity ${target} -`, `${task} Task.assignees[] ${target} -`, `${note} Note.links[] ${target} -`].sort(),
    );
  });

  it('the cases above run both ways: hops where the form allows, the EXISTS fallback past the cap', async () => {
    let hops = 0;
    let fellBack = 0;
    let answered = 0;
    for (const [, type, filters, includeRetired] of cases) {
      const linked = await answer(type, filters(), {}, includeRetired);
      const capped = await answer(type, filters(), { hopCap: 3 }, includeRetired);
      if (linked.hops) hops++;
      if (linked.hops && linked.ids.length > 0) answered++;
      if (capped.hops && capped.statements > linked.statements) fellBack++;
    }
    expect(hops).toBeGreaterThan(60);
    expect(answered).toBeGreaterThan(40); // the data makes most hop filters match something
    expect(fellBack).toBeGreaterThan(20);
    // Forms that keep their EXISTS: negated, under any, include_retired.
    expect((await answer('Task', [['entity.Shot.code', 'is_not', 'A']], {})).hops).toBe(false);
    expect((await answer('Task', [{ filter_operator: 'any', filters: [['entity.Shot.code', 'is', 'A']] }], {})).hops).toBe(false);
    expect((await answer('Task', [['entity.Shot.code', 'is', 'A']], {}, true)).hops).toBe(false);
  });

  it('keyset pages, order on a data field and `fields` walk the same records both ways', async () => {
    const walk = async (filters: unknown, options: PlanOptions) => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 100; page++) {
        const input: QueryInput = {
          entityType: 'Task',
          filtersJson: JSON.stringify(filters),
          fieldsJson: JSON.stringify(['name']),
          order: [{ field: 'name', direction: 'desc' }],
          limit: 7,
          ...(cursor ? { cursor } : {}),
        };
        const { plan, fingerprint } = planQuery(schema, input, options);
        const out = await runQueryPlan(sql, { ...plan, limit: plan.limit + 1 });
        const rows = out.rows.slice(0, 7);
        for (const r of rows) {
          const rec = JSON.parse(r.json) as { id: string; data: Record<string, unknown> };
          expect(Object.keys(rec.data).every((k) => k === 'name')).toBe(true);
          seen.push(rec.id);
        }
        if (out.rows.length <= 7) return seen;
        cursor = encodeCursor({ k: rows[rows.length - 1]!.keys, o: fingerprint });
      }
      throw new Error('too many pages');
    };
    for (const filters of [
      [['entity.Shot.sequence.Sequence.code', 'in', ['SQ010', 'SQ020']]],
      [
        ['project_id', 'is', P()],
        ['assignees.User.name', 'in', ['Ann', 'Bob', 'Cy', 'Dee']],
      ],
    ]) {
      const exists = await walk(filters, { linkHops: false });
      expect(exists.length).toBeGreaterThan(14); // three pages at least
      expect(await walk(filters, {})).toEqual(exists);
      expect(await walk(filters, { hopCap: 3 })).toEqual(exists);
    }
  });

  it('the service answers hop queries by the link table (a link row removed by hand hides its record)', async () => {
    const q = (filters: unknown) =>
      client.call
        .queryRecords(
          { entityType: 'Task', filtersJson: JSON.stringify(filters), limit: 1000, answerJson: true, order: [], includeTotal: false, includeRetired: false },
          asAdmin,
        )
        .then((r) => (JSON.parse(r.itemsJson ?? '[]') as { id: string }[]).map((x) => x.id));
    const filters = [['entity.Shot.sequence.Sequence.code', 'in', ['SQ010', 'SQ020', 'SQ030']]];
    const before = await q(filters);
    expect(before.length).toBeGreaterThan(0);
    expect(before).toEqual((await answer('Task', filters, { linkHops: false })).ids);
    const victim = before[0]!;
    await sql.query(`delete from records.record_link where from_id = $1 and link = 'Task.entity'`, [victim]);
    try {
      expect(await q(filters)).toEqual(before.filter((id) => id !== victim));
    } finally {
      await sql.query(
        `insert into records.record_link select r.id, 'Task.entity', (r.data->'entity'->>'id')::uuid, r.project_id from records.record r where r.id = $1`,
        [victim],
      );
    }
    expect(await q(filters)).toEqual(before);
  });
});
