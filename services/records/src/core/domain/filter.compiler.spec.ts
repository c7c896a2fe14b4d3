/**
 * The filter compiler: the grammar, every operator on the kinds it applies to (and a refusal on
 * the ones it does not), traversal, values always bound, and each malformed case with its loc.
 * What the SQL matches is shown against PostgreSQL in test/query.int.spec.ts.
 */
import { AppError, type Problem } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { compileFilter } from './filter.compiler.js';
import { LIKE_MAX_CHARS } from './filter.operators.js';
import { linkIdExpr, textFieldExpr } from './filter.sql.js';
import { compileSchema, NO_SCHEMA, type SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';

const ID = '0190a000-0000-7000-8000-0000000000b1';

const SNAPSHOT: SchemaSnapshot = {
  version: 2,
  entity_types: [
    { code: 'Sequence', project_scoped: true, fields: [{ code: 'code', type: 'text' }] },
    {
      code: 'Shot',
      project_scoped: true,
      fields: [
        { code: 'code', type: 'text' },
        { code: 'sequence', type: 'link', link_types: ['Sequence'] },
        { code: 'cut_in', type: 'integer' },
        { code: 'ratio', type: 'float' },
        { code: 'on', type: 'boolean' },
        { code: 'day', type: 'date' },
        { code: 'at', type: 'datetime' },
        { code: 'size', type: 'enum', options: [{ code: 'small' }] },
        { code: 'tags', type: 'multi_enum', options: [{ code: 'red' }] },
        { code: 'meta', type: 'json' },
        { code: 'site', type: 'url' },
        { code: 'tint', type: 'color' },
        { code: 'length', type: 'duration' },
        { code: 'parent', type: 'link', link_types: ['Shot'] },
      ],
    },
    {
      code: 'Task',
      project_scoped: true,
      fields: [
        { code: 'name', type: 'text' },
        { code: 'entity', type: 'link', link_types: ['Shot', 'Sequence'] },
        { code: 'assignees', type: 'multi_link', link_types: ['User'] },
      ],
    },
    { code: 'User', project_scoped: false, fields: [{ code: 'name', type: 'text' }] },
  ],
  statuses: [],
  steps: [],
  priorities: [],
};
const schema = compileSchema(2, SNAPSHOT);

const compile = (type: string, filters: unknown) => compileFilter(schema, type, filters);

function problemsOf(type: string, filters: unknown, s = schema): Problem[] {
  try {
    compileFilter(s, type, filters);
  } catch (err) {
    if (err instanceof AppError && err.kind === 'invalid') return err.problems;
    throw err;
  }
  throw new Error('compiled without a problem');
}

describe('filter compiler: grammar', () => {
  it('a list is all of its items; a group says all or any; nothing is everything', () => {
    expect(compile('Shot', []).sql).toBe('true');
    expect(compile('Shot', undefined).sql).toBe('true');
    const all = compile('Shot', [
      ['code', 'is', 'a'],
      ['cut_in', 'greater_than', 3],
    ]);
    expect(all.sql).toMatch(/ and /);
    const any = compile('Shot', {
      filter_operator: 'any',
      filters: [
        ['code', 'is', 'a'],
        ['code', 'is', 'b'],
      ],
    });
    expect(any.sql).toMatch(/ or /);
    expect(compile('Shot', { filter_operator: 'any', filters: [] }).sql).toBe('false');
  });

  it('groups nest to depth 8; depth 9 is refused at the deepest group', () => {
    let f: unknown = [['code', 'is', 'x']];
    for (let i = 0; i < 7; i++) f = [{ filter_operator: 'all', filters: f }];
    expect(compile('Shot', f).params).toEqual([JSON.stringify({ code: 'x' })]);
    const nine = [{ filter_operator: 'all', filters: f }];
    const [p] = problemsOf('Shot', nine);
    expect(p!.type).toBe('too_deep');
    expect(p!.loc).toEqual(['filters', 0, 'filters', 0, 'filters', 0, 'filters', 0, 'filters', 0, 'filters', 0, 'filters', 0, 'filters', 0]);
  });

  it('every value is a bound parameter, hostile strings included', () => {
    const hostile = "'; DROP TABLE record; --\\ \u00e9\u{1F600}";
    const c = compile('Shot', [
      ['code', 'is', hostile],
      ['code', 'contains', hostile],
      ['status', 'in', [hostile]],
    ]);
    expect(c.sql).not.toContain('DROP');
    expect(c.sql).not.toContain('?');
    expect(c.params).toContain(JSON.stringify({ code: hostile }));
    expect(c.params).toContain(`%'; DROP TABLE record; --\\\\ \u00e9\u{1F600}%`);
    expect(c.params).toContain(hostile);
    expect(c.sql).toMatch(/\$1::jsonb.*\$2::text.*r\.status = \$3::text/s);
  });

  it('numbers placeholders after the ones already given', () => {
    const params: unknown[] = ['x'];
    const c = compileFilter(schema, 'Shot', [['code', 'is', 'a']], params);
    expect(c.sql).toContain('$2::jsonb');
    expect(params).toHaveLength(2);
  });

  it('all problems of a filter are reported together, each at its loc', () => {
    const problems = problemsOf('Shot', [
      ['nope', 'is', 1],
      { filter_operator: 'any', filters: [['code', 'bogus', 1], 'x'] },
      ['code', 'is'],
      [1, 'is', 1],
      { filter_operator: 'some', filters: [] },
      { filter_operator: 'all', filters: 'x' },
      { filter_operator: 'all', filters: [], extra: 1 },
    ]);
    expect(problems.map((p) => [p.loc, p.type])).toEqual([
      [['filters', 0, 0], 'unknown_field'],
      [['filters', 1, 'filters', 0, 1], 'operator'],
      [['filters', 1, 'filters', 1], 'condition_type'],
      [['filters', 2], 'condition_length'],
      [['filters', 3, 0], 'string_type'],
      [['filters', 4, 'filter_operator'], 'literal_error'],
      [['filters', 5, 'filters'], 'list_type'],
      [['filters', 6, 'extra'], 'extra_forbidden'],
    ]);
  });

  it('a filter that is neither a list nor a group is refused at filters', () => {
    expect(problemsOf('Shot', 'code').map((p) => p.loc)).toEqual([['filters']]);
    expect(problemsOf('Shot', { filters: [] }).map((p) => p.loc)).toEqual([['filters', 'filter_operator']]);
  });

  it('with no schema only the columns can be filtered', () => {
    expect(compileFilter(NO_SCHEMA, 'Shot', [['status', 'is', 'ip']]).params).toEqual(['ip']);
    expect(problemsOf('Shot', [['code', 'is', 'x']], NO_SCHEMA)[0]!.msg).toMatch(/no schema yet/);
  });
});

describe('filter compiler: operators per field type', () => {
  const accepted: [string, string, unknown, unknown?][] = [
    ['code', 'is', 'a'],
    ['code', 'is', null],
    ['code', 'is_not', 'a'],
    ['code', 'in', ['a', 'b', null]],
    ['code', 'not_in', []],
    ['code', 'less_than', 'm'],
    ['code', 'greater_or_equal', 'm'],
    ['code', 'contains', 'x'],
    ['code', 'not_contains', 'x'],
    ['code', 'starts_with', 'x'],
    ['code', 'ends_with', 'x'],
    ['site', 'contains', 'example'],
    ['tint', 'is', '#ff0000'],
    ['cut_in', 'is', 3],
    ['cut_in', 'in', [1, 2]],
    ['cut_in', 'less_or_equal', 3],
    ['cut_in', 'between', 1, 9],
    ['cut_in', 'not_between', 1, 9],
    ['ratio', 'greater_than', 0.5],
    ['length', 'less_than', 90],
    ['on', 'is', true],
    ['on', 'is_not', false],
    ['day', 'is', '2026-01-02'],
    ['day', 'between', '2026-01-01', '2026-02-01'],
    ['day', 'in_next', 7, 'DAY'],
    ['day', 'in_last', 1, 'MONTH'],
    ['at', 'greater_than', '2026-01-01T00:00:00Z'],
    ['at', 'in_last', 3, 'HOUR'],
    ['at', 'in_next', 2, 'WEEK'],
    ['at', 'is', '2026-01-01T10:00:00+02:00'],
    ['size', 'is', 'small'],
    ['size', 'not_in', ['small']],
    ['tags', 'is', 'red'],
    ['tags', 'in', ['red']],
    ['meta', 'is', { a: 1 }],
    ['sequence', 'is', { type: 'Sequence', id: ID }],
    ['sequence', 'type_is', 'Sequence'],
    ['sequence', 'type_is_not', 'Sequence'],
    ['id', 'is', ID],
    ['project_id', 'in', [ID]],
    ['status', 'is', 'ip'],
    ['status', 'contains', 'i'],
    ['active', 'is', true],
    ['created_at', 'between', '2026-01-01T00:00:00Z', '2026-12-31T00:00:00Z'],
    ['updated_at', 'in_last', 1, 'DAY'],
    ['entity_type', 'is', 'Shot'],
  ];
  it.each(accepted)('%s %s %j', (path, op, value, high) => {
    const cond = high === undefined ? [path, op, value] : [path, op, value, high];
    const c = compile('Shot', [cond]);
    expect(c.sql).not.toBe('false');
    if (typeof value === 'string' && value.length > 3) expect(c.sql).not.toContain(value);
    if (value !== null && !(Array.isArray(value) && value.length === 0)) expect(c.params.length).toBeGreaterThan(0);
  });

  it('multi_link any-match and type_is use containment on data', () => {
    const c = compile('Task', [['assignees', 'is', { type: 'User', id: ID }]]);
    expect(c.sql).toContain('r.data @> $1::jsonb');
    expect(c.params).toEqual([JSON.stringify({ assignees: [{ type: 'User', id: ID }] })]);
    expect(compile('Task', [['assignees', 'type_is', 'User']]).params).toEqual([JSON.stringify({ assignees: [{ type: 'User' }] })]);
  });

  it('positive conditions stay bare, in the shapes the query indexes match (docs/queries.md)', () => {
    expect(
      compile('Task', [
        ['project_id', 'is', ID],
        ['status', 'is', 'ip'],
      ]).sql,
    ).toBe('(r.project_id = $1::uuid and r.status = $2::text)');
    expect(compile('Shot', [['code', 'is', 'a']]).sql).toBe('(r.data @> $1::jsonb)');
    expect(compile('Shot', [['code', 'contains', 'a']]).sql).toBe(`(${textFieldExpr('r', 'code')} ilike $1::text)`);
    expect(compile('Shot', [['sequence.Sequence.code', 'is', 'a']]).sql).toContain(`h1.id = ${linkIdExpr('r', 'sequence')}`);
  });

  it('a text value past LIKE_MAX_CHARS is matched on lower() without ILIKE (no trigram search of a huge pattern, lowered once)', () => {
    const code = textFieldExpr('r', 'code');
    const long = 'a'.repeat(LIKE_MAX_CHARS + 1);
    expect(compile('Shot', [['code', 'contains', long]])).toEqual({ sql: `(strpos(lower(${code}), lower($1::text)) > 0)`, params: [long] });
    expect(compile('Shot', [['code', 'starts_with', long]]).sql).toBe(`(starts_with(lower(${code}), lower($1::text)))`);
    expect(compile('Shot', [['code', 'ends_with', long]]).sql).toBe(`(right(lower(${code}), char_length(lower($1::text))) = lower($1::text))`);
    expect(compile('Shot', [['code', 'not_contains', long]]).sql).toBe(`(not coalesce(strpos(lower(${code}), lower($1::text)) > 0, false))`);
    // At the limit: still ILIKE, so the trigram index serves it.
    expect(compile('Shot', [['code', 'contains', 'a'.repeat(LIKE_MAX_CHARS)]]).sql).toBe(`(${code} ilike $1::text)`);
  });

  it('negative operators are the negation of the positive one, so empty fields match', () => {
    expect(compile('Shot', [['code', 'is_not', 'a']]).sql).toMatch(/^\(not coalesce\(r\.data @> \$1::jsonb, false\)\)$/);
    expect(compile('Shot', [['code', 'not_in', []]]).sql).toBe('(not coalesce(false, false))');
    expect(compile('Shot', [['code', 'in', []]]).sql).toBe('(false)');
    expect(compile('Shot', [['code', 'is', null]]).sql).toContain("r.data->'code' is null");
    expect(compile('Shot', [['tags', 'is', null]]).sql).toContain("'[]'::jsonb");
  });

  it('contains escapes LIKE wildcards', () => {
    expect(compile('Shot', [['code', 'contains', '50%_a\\b']]).params).toEqual(['%50\\%\\_a\\\\b%']);
    expect(compile('Shot', [['code', 'starts_with', 'ab']]).params).toEqual(['ab%']);
    expect(compile('Shot', [['code', 'ends_with', 'ab']]).params).toEqual(['%ab']);
  });

  const refusedOp: [string, string, unknown, unknown?][] = [
    ['on', 'less_than', true],
    ['on', 'contains', 'x'],
    ['cut_in', 'contains', '1'],
    ['code', 'between', 'a', 'b'],
    ['code', 'in_last', 1, 'DAY'],
    ['code', 'type_is', 'Shot'],
    ['size', 'less_than', 'small'],
    ['tags', 'contains', 'r'],
    ['meta', 'in', [1]],
    ['sequence', 'contains', 'x'],
    ['sequence', 'less_than', 'x'],
    ['id', 'less_than', ID],
    ['active', 'contains', 'x'],
    ['cut_in', 'in_next', 1, 'DAY'],
  ];
  it.each(refusedOp)('%s does not take %s', (path, op, value, high) => {
    const cond = high === undefined ? [path, op, value] : [path, op, value, high];
    const [p] = problemsOf('Shot', [['code', 'is', 'ok'], cond]);
    expect(p!.loc).toEqual(['filters', 1, 1]);
    expect(p!.type).toBe('operator_type');
  });

  const badValue: [unknown[], (string | number)[]][] = [
    [
      ['cut_in', 'is', '3'],
      ['filters', 0, 2],
    ],
    [
      ['cut_in', 'less_than', 'x'],
      ['filters', 0, 2],
    ],
    [
      ['cut_in', 'between', 1, '9'],
      ['filters', 0, 3],
    ],
    [
      ['on', 'is', 'true'],
      ['filters', 0, 2],
    ],
    [
      ['day', 'is', '2026-1-2'],
      ['filters', 0, 2],
    ],
    [
      ['at', 'greater_than', '2026-01-01'],
      ['filters', 0, 2],
    ],
    [
      ['at', 'in_last', -1, 'DAY'],
      ['filters', 0, 2],
    ],
    [
      ['at', 'in_last', 1, 'YEAR'],
      ['filters', 0, 3],
    ],
    [
      ['at', 'in_last', 1],
      ['filters', 0],
    ],
    [
      ['code', 'in', 'a'],
      ['filters', 0, 2],
    ],
    [
      ['code', 'in', ['a', 1]],
      ['filters', 0, 2, 1],
    ],
    [
      ['code', 'contains', 1],
      ['filters', 0, 2],
    ],
    [
      ['code', 'is', 'a', 'b'],
      ['filters', 0],
    ],
    [
      ['id', 'is', 'not-a-uuid'],
      ['filters', 0, 2],
    ],
    [
      ['sequence', 'is', { type: 'Sequence' }],
      ['filters', 0, 2],
    ],
    [
      ['sequence', 'is', { type: 'Sequence', id: ID, x: 1 }],
      ['filters', 0, 2, 'x'],
    ],
    [
      ['sequence', 'type_is', 'not a type'],
      ['filters', 0, 2],
    ],
    [
      ['created_at', 'is', 'yesterday'],
      ['filters', 0, 2],
    ],
    [
      ['created_at', 'greater_than', '2026-02-30T00:00:00Z'],
      ['filters', 0, 2],
    ],
    [
      ['at', 'in', ['2026-01-01T00:00:00Z', '0000-01-01T00:00:00Z']],
      ['filters', 0, 2, 1],
    ],
    [
      ['day', 'is', '2026-02-29'],
      ['filters', 0, 2],
    ],
    [
      ['day', 'in_next', 2 ** 40, 'MONTH'],
      ['filters', 0, 2],
    ],
    [
      ['day', 'between', '2026-01-01', '2026-04-31'],
      ['filters', 0, 3],
    ],
    [
      ['code', 'in', ['a', 'b\u0000']],
      ['filters', 0, 2, 1],
    ],
  ];
  it.each(badValue)('%j is refused at %j', (cond, loc) => {
    const [p] = problemsOf('Shot', [cond]);
    expect(p!.loc).toEqual(loc);
  });
});

describe('filter compiler: link traversal', () => {
  it('one hop is an EXISTS over a live record of the hop type', () => {
    const c = compile('Shot', [['sequence.Sequence.code', 'is', 'SQ010']]);
    expect(c.sql).toMatch(/exists \(select 1 from records\.record h1 where h1\.id = .*h1\.entity_type = 'Sequence' and h1\.retired_at is null/s);
    expect(c.params).toEqual([JSON.stringify({ code: 'SQ010' })]);
  });

  it('two and four hops nest; a multi_link hop matches any element', () => {
    const two = compile('Task', [['entity.Shot.sequence.Sequence.code', 'is', 'SQ010']]);
    expect(two.sql.match(/exists \(/g)).toHaveLength(2);
    const four = compile('Task', [['entity.Shot.parent.Shot.parent.Shot.sequence.Sequence.code', 'is', 'SQ']]);
    expect(four.sql.match(/exists \(/g)).toHaveLength(4);
    expect(compile('Task', [['assignees.User.name', 'contains', 'ann']]).sql).toContain('jsonb_array_elements');
  });

  it('a negative operator through a hop negates the whole hop', () => {
    const c = compile('Task', [['entity.Shot.code', 'is_not', 'x']]);
    expect(c.sql).toMatch(/^\(not exists \(/);
    expect(c.sql).toContain('h1.data @> $1::jsonb');
  });

  const refused: [string, string][] = [
    ['entity.Shot.nope', 'unknown_field'],
    ['name.Shot.code', 'path_not_link'],
    ['entity.Asset.code', 'path_type'],
    ['entity.User.name', 'path_type'],
    ['entity.Shot', 'path'],
    ['entity..code', 'path'],
    ['entity.Shot.parent.Shot.parent.Shot.parent.Shot.parent.Shot.code', 'path_too_long'],
  ];
  it.each(refused)('%s is refused (%s) at the path', (path, type) => {
    const [p] = problemsOf('Task', [
      ['name', 'is', 'x'],
      [path, 'is', 'x'],
    ]);
    expect(p!.loc).toEqual(['filters', 1, 0]);
    expect(p!.type).toBe(type);
  });

  it('the type after the hop decides the operators', () => {
    const [p] = problemsOf('Task', [['entity.Shot.cut_in', 'contains', 'x']]);
    expect(p!.loc).toEqual(['filters', 0, 1]);
  });
});

describe('filter compiler: link hops over the link table', () => {
  const hops = (filters: unknown) => compileFilter(schema, 'Task', filters, ['Task'], { cap: 100 });

  it('a positive top-level hop path runs innermost-first: one capped id set per type, the queried record by its set', () => {
    const c = hops([['entity.Shot.sequence.Sequence.code', 'is', 'SQ030']]);
    expect(c.ctes).toHaveLength(3);
    expect(c.ctes![0]).toMatch(
      /^lh1_2 as materialized \(select array\(select h1\.id from records\.record h1\s+where h1\.entity_type = 'Sequence' and h1\.retired_at is null and h1\.data @> \$2::jsonb limit 101\)/,
    );
    expect(c.ctes![1]).toContain("l.link = 'Shot.sequence' and l.to_id = any((select ids from lh1_2)::uuid[]) limit 101");
    expect(c.ctes![2]).toContain("l.link = 'Task.entity' and l.to_id = any((select ids from lh1_1)::uuid[]) limit 101");
    expect(c.sql).toBe('(r.id in (select unnest(ids) from lh1_0))');
    expect(c.overCap).toBe(
      '(cardinality((select ids from lh1_2)) > 100 or cardinality((select ids from lh1_1)) > 100 or cardinality((select ids from lh1_0)) > 100)',
    );
    expect(c.params).toEqual(['Task', '{"code":"SQ030"}']);
  });

  it('multi_link kinds end in [] and take distinct ids; a pinned project narrows the queried type hashed against the set', () => {
    const P = '0190A000-0000-7000-8000-0000000000AA';
    const c = hops({ filter_operator: 'all', filters: [['assignees.User.name', 'is', 'Ann'], { filter_operator: 'all', filters: [['project_id', 'is', P]] }] });
    expect(c.ctes![1]).toContain(
      "select distinct l.from_id from records.record_link l\n          where l.link = 'Task.assignees[]' and l.project_id = $3::uuid and (l.to_id in (select unnest(ids) from lh1_1)) is true",
    );
    expect(c.params).toEqual(['Task', '{"name":"Ann"}', P.toLowerCase(), P.toLowerCase()]);
  });

  it('negated, under any, or without the option: the EXISTS form', () => {
    for (const filters of [
      [['entity.Shot.code', 'is_not', 'A']],
      [['entity.Shot.code', 'not_in', ['A']]],
      [{ filter_operator: 'any', filters: [['entity.Shot.code', 'is', 'A']] }],
      { filter_operator: 'any', filters: [['entity.Shot.code', 'is', 'A']] },
      [{ filter_operator: 'all', filters: [{ filter_operator: 'any', filters: [['entity.Shot.code', 'is', 'A']] }] }],
    ]) {
      const c = hops(filters);
      expect(c.ctes, JSON.stringify(filters)).toBeUndefined();
      expect(c.sql).toContain('exists (select 1 from records.record h1');
    }
    expect(compile('Task', [['entity.Shot.code', 'is', 'A']]).ctes).toBeUndefined();
  });

  it('refuses the same paths the EXISTS form refuses, with the same problems', () => {
    const bad = [
      ['entity.Shot.cut_in.Shot.code', 'is', 'A'],
      ['entity.User.name', 'is', 'A'],
      ['entity.Nope.code', 'is', 'A'],
      ['entity.Shot.nope', 'is', 'A'],
    ];
    for (const cond of bad) {
      let linked: Problem[] = [];
      try {
        hops([cond]);
      } catch (err) {
        linked = (err as AppError).problems;
      }
      expect(linked).toEqual(problemsOf('Task', [cond]));
      expect(linked.length).toBe(1);
    }
  });
});
