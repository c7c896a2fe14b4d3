import type { Problem } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, inspectJson } from './json.guard.js';

const inspect = (value: unknown, source: 'body' | 'query' = 'body'): Problem[] => {
  const problems: Problem[] = [];
  inspectJson(value, source, problems);
  return problems;
};

/** `depth` arrays nested in each other: [[[...]]]. */
const nestedArrays = (depth: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
};

describe('inspectJson', () => {
  it('accepts ordinary values, including well-formed surrogate pairs', () => {
    expect(inspect({ project_id: null, active: true, data: { code: 'sh010', n: 1, tags: ['a', 'b'], emoji: '🎬', nested: { x: [{ y: 'z' }] } } })).toEqual([]);
    expect(inspect('plain')).toEqual([]);
    expect(inspect(undefined)).toEqual([]);
  });

  it('reports a NUL in a value with the path to it', () => {
    expect(inspect({ data: { code: 'sh\u0000010' } })).toEqual([
      { loc: ['body', 'data', 'code'], msg: 'String should not contain the NUL character (\\u0000)', type: 'string_invalid_character' },
    ]);
    expect(inspect({ data: { tags: ['ok', 'bad\u0000'] } })[0]!.loc).toEqual(['body', 'data', 'tags', 1]);
  });

  it('reports a NUL in a key, naming the key', () => {
    expect(inspect({ data: { 'co\u0000de': 1 } })).toEqual([
      { loc: ['body', 'data', 'co\u0000de'], msg: 'Keys should not contain the NUL character (\\u0000)', type: 'string_invalid_character' },
    ]);
  });

  it('reports lone surrogates in values and keys, high or low', () => {
    expect(inspect({ data: { code: '\ud800' } })).toEqual([
      { loc: ['body', 'data', 'code'], msg: 'String should not contain a lone UTF-16 surrogate', type: 'string_invalid_character' },
    ]);
    expect(inspect({ a: 'x\udc00y' })[0]!.loc).toEqual(['body', 'a']);
    expect(inspect({ ['k\ud83d']: 1 })[0]).toMatchObject({ loc: ['body', 'k\ud83d'], type: 'string_invalid_character' });
  });

  it('checks query values and a bare string', () => {
    expect(inspect({ entity_type: 'Shot\u0000', limit: ['1', '2\u0000'] }, 'query').map((p) => p.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'entity_type'],
        ['query', 'limit', 1],
      ]),
    );
    expect(inspect('a\u0000')).toEqual([{ loc: ['body'], msg: expect.any(String), type: 'string_invalid_character' }]);
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and reports the first container deeper than that`, () => {
    expect(inspect(nestedArrays(MAX_JSON_DEPTH))).toEqual([]);
    const deep = inspect(nestedArrays(MAX_JSON_DEPTH + 1));
    expect(deep).toEqual([
      { loc: ['body', ...Array(MAX_JSON_DEPTH).fill(0)], msg: `Input should be nested at most ${MAX_JSON_DEPTH} levels deep`, type: 'too_deep' },
    ]);
    const inData = inspect({ data: { x: nestedArrays(100_000) } });
    expect(inData).toHaveLength(1);
    expect(inData[0]!.loc.slice(0, 4)).toEqual(['body', 'data', 'x', 0]);
    expect(inData[0]!.loc).toHaveLength(1 + MAX_JSON_DEPTH);
  });

  it('caps the number of problems it reports', () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, '\u0000']));
    expect(inspect(many).length).toBe(20);
  });
});
