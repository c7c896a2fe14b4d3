import { describe, expect, it } from 'vitest';
import { ValidatorCache, compileSettings } from './validators.js';

const SCHEMA = {
  type: 'object',
  required: ['fps'],
  properties: {
    fps: { type: 'integer', minimum: 1, maximum: 120 },
    name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
    codec: { enum: ['h264', 'prores'] },
    output: { type: 'object', required: ['dir'], properties: { dir: { type: 'string' } } },
    list: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    maybe: { type: ['string', 'null'] },
  },
};

describe('compileSettings: partial (overrides)', () => {
  const v = compileSettings(SCHEMA as never);

  it('accepts any subset, required not enforced on objects', () => {
    expect(v.partial({}, ['body'])).toEqual([]);
    expect(v.partial({ output: {} }, ['body'])).toEqual([]);
    expect(v.full({}, ['body'])).toEqual([{ loc: ['body', 'fps'], msg: 'Field required', type: 'missing' }]);
  });

  it('reports every problem at once with loc into the body', () => {
    const problems = v.partial({ fps: 0, name: 'TOOLONG', codec: 'vp9', output: { dir: 3, other: 1 }, list: [{ n: 1 }, {}], maybe: 1, nope: true }, ['body']);
    expect(problems.map((p) => [p.loc, p.type])).toEqual(
      expect.arrayContaining([
        [['body', 'fps'], 'greater_than_equal'],
        [['body', 'name'], 'string_too_long'],
        [['body', 'name'], 'string_pattern_mismatch'],
        [['body', 'codec'], 'enum'],
        [['body', 'output', 'dir'], 'string_type'],
        [['body', 'output', 'other'], 'extra_forbidden'],
        [['body', 'list', 1, 'n'], 'missing'],
        [['body', 'maybe'], 'type_error'],
        [['body', 'nope'], 'extra_forbidden'],
      ]),
    );
    expect(problems).toHaveLength(9);
  });

  it('matches patterns in linear time (RE2), even a pattern a backtracking engine would stall on', () => {
    const evil = compileSettings({ type: 'object', properties: { s: { type: 'string', pattern: '^(a|a)*$' } } });
    const t0 = performance.now();
    expect(evil.partial({ s: `${'a'.repeat(100_000)}!` }, ['body'])).toHaveLength(1);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('ValidatorCache', () => {
  it('compiles once per version and body, and evicts the least recently used', () => {
    const cache = new ValidatorCache(2);
    const a = cache.get('a', '1.0.0', 'd1', SCHEMA as never);
    expect(cache.get('a', '1.0.0', 'd1', SCHEMA as never)).toBe(a);
    expect(cache.compiled).toBe(1);
    cache.get('a', '1.0.0', 'd2', SCHEMA as never); // same version, another body: its own entry
    expect(cache.compiled).toBe(2);
    cache.get('a', '1.0.0', 'd1', SCHEMA as never); // touch d1
    cache.get('b', '1.0.0', 'd3', SCHEMA as never); // evicts d2
    expect(cache.size).toBe(2);
    cache.get('a', '1.0.0', 'd1', SCHEMA as never);
    expect(cache.compiled).toBe(3);
    cache.get('a', '1.0.0', 'd2', SCHEMA as never);
    expect(cache.compiled).toBe(4);
  });
});
