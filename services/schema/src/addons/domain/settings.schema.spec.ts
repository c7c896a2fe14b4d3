import { describe, expect, it } from 'vitest';
import { ADDON_LIMITS } from './addon.limits.js';
import { partialSchemaOf, patternProblem, settingsSchemaProblems } from './settings.schema.js';

const LOC = ['body', 'settings_schema'];
const locs = (schema: unknown) => settingsSchemaProblems(schema, LOC).map((p) => p.loc);

describe('settings schema keywords', () => {
  it('accepts the listed keywords, a root $schema of draft 2020-12 and boolean additionalProperties', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      title: 'Publish',
      description: 'settings',
      required: ['fps'],
      additionalProperties: false,
      properties: {
        fps: { type: 'integer', minimum: 1, maximum: 240, default: 24 },
        codec: { type: 'string', enum: ['h264', 'prores'] },
        name: { type: 'string', minLength: 1, maxLength: 20, pattern: '^[a-z_]+$' },
        tags: { type: 'array', items: { type: 'string' } },
        extra: { type: 'object', additionalProperties: { type: ['number', 'null'] } },
      },
    };
    expect(settingsSchemaProblems(schema, LOC)).toEqual([]);
  });

  it('refuses every other keyword, $ref among them, where it stands', () => {
    const problems = settingsSchemaProblems(
      { type: 'object', $defs: {}, properties: { a: { $ref: '#' }, b: { type: 'string', format: 'email' }, c: { oneOf: [] } } },
      LOC,
    );
    expect(problems.map((p) => [p.loc, p.type])).toEqual([
      [[...LOC, '$defs'], 'extra_forbidden'],
      [[...LOC, 'properties', 'a', '$ref'], 'extra_forbidden'],
      [[...LOC, 'properties', 'b', 'format'], 'extra_forbidden'],
      [[...LOC, 'properties', 'c', 'oneOf'], 'extra_forbidden'],
    ]);
    expect(problems[1]!.msg).toContain('references are not supported');
  });

  it('needs an object root and well-formed keyword values', () => {
    expect(locs({ type: 'array' })).toEqual([[...LOC, 'type']]);
    expect(locs([])).toEqual([LOC]);
    expect(
      locs({
        type: 'object',
        $schema: 'http://json-schema.org/draft-07/schema#',
        properties: { a: { type: 'str' }, b: { minimum: '1' }, c: { maxLength: -1 }, d: { enum: [] }, e: 5, f: { required: ['x', 'x'] } },
      }),
    ).toEqual([
      [...LOC, '$schema'],
      [...LOC, 'properties', 'a', 'type'],
      [...LOC, 'properties', 'b', 'minimum'],
      [...LOC, 'properties', 'c', 'maxLength'],
      [...LOC, 'properties', 'd', 'enum'],
      [...LOC, 'properties', 'e'],
      [...LOC, 'properties', 'f', 'required'],
    ]);
  });
});

describe('settings schema bounds', () => {
  it('refuses a schema larger than the byte bound without walking it', () => {
    const big = { type: 'object', description: 'x'.repeat(ADDON_LIMITS.schemaBytes) };
    expect(settingsSchemaProblems(big, LOC)).toEqual([expect.objectContaining({ loc: LOC, type: 'too_large' })]);
  });

  it('refuses sub-schemas nested past the depth bound', () => {
    let node: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < ADDON_LIMITS.schemaDepth + 2; i++) node = { type: 'object', properties: { a: node } };
    const problems = settingsSchemaProblems(node, LOC);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.type).toBe('too_deep');
    expect(problems[0]!.loc.length).toBe(LOC.length + 2 * ADDON_LIMITS.schemaDepth);
  });

  it('refuses more sub-schemas than the bound, once', () => {
    const properties = Object.fromEntries(Array.from({ length: ADDON_LIMITS.schemaNodes + 5 }, (_, i) => [`p${i}`, {}]));
    const problems = settingsSchemaProblems({ type: 'object', properties }, LOC);
    expect(problems).toEqual([expect.objectContaining({ loc: LOC, type: 'too_large' })]);
  });

  it('refuses long enums and long patterns', () => {
    const enumProblems = settingsSchemaProblems(
      { type: 'object', properties: { a: { enum: Array.from({ length: ADDON_LIMITS.enumValues + 1 }, (_, i) => i) } } },
      LOC,
    );
    expect(enumProblems.map((p) => p.type)).toEqual(['too_large']);
    expect(patternProblem('a'.repeat(ADDON_LIMITS.patternChars + 1))).toMatch(/at most/);
  });
});

describe('patterns', () => {
  it('refuses nested quantifiers that backtrack catastrophically', () => {
    for (const p of ['^(a+)+$', '(x*)*y', '^(\\w+\\s?)*$']) expect(patternProblem(p), p).toMatch(/backtrack/);
  });

  it('refuses what RE2 cannot run (look-around, back-references)', () => {
    expect(patternProblem('(?=a)b')).toMatch(/RE2/);
    expect(patternProblem('(a)\\1')).toMatch(/RE2/);
  });

  it('accepts ordinary patterns', () => {
    for (const p of ['^[a-z][a-z0-9_]*$', '^\\d{3,4}x\\d{3,4}$', '^(exr|png|jpg)$']) expect(patternProblem(p), p).toBeNull();
  });
});

describe('partialSchemaOf', () => {
  it('drops required along objects, closes objects that name their properties, keeps items whole', () => {
    const schema = {
      type: 'object',
      required: ['a'],
      properties: {
        a: { type: 'object', required: ['x'], properties: { x: { type: 'integer' } } },
        free: { type: 'object' },
        list: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'string' } } } },
        open: { type: 'object', properties: {}, additionalProperties: { type: 'object', required: ['k'], properties: { k: {} } } },
      },
    };
    expect(partialSchemaOf(schema as never)).toEqual({
      type: 'object',
      additionalProperties: false,
      properties: {
        a: { type: 'object', properties: { x: { type: 'integer' } }, additionalProperties: false },
        free: { type: 'object' },
        list: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'string' } } } },
        open: { type: 'object', properties: {}, additionalProperties: { type: 'object', properties: { k: {} }, additionalProperties: false } },
      },
    });
  });
});
