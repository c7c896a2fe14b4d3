import { describe, expect, it } from 'vitest';
import { leafPointers, mergeSettings, resolveSettings, sourcesOf } from './settings.merge.js';
import { compileSettings } from './validators.js';

describe('mergeSettings', () => {
  it('merges objects key by key and replaces arrays, scalars and null whole', () => {
    const base = { a: { x: 1, y: 2 }, list: [1, 2, 3], s: 'one', n: { deep: { k: 1 } }, keep: true };
    const over = { a: { y: 20, z: 30 }, list: [9], s: null, n: { deep: 'flat' } };
    expect(mergeSettings(base, over)).toEqual({ a: { x: 1, y: 20, z: 30 }, list: [9], s: null, n: { deep: 'flat' }, keep: true });
    expect(base.a).toEqual({ x: 1, y: 2 }); // inputs unchanged
  });

  it('replaces an object below with a scalar and a scalar below with an object', () => {
    expect(mergeSettings({ a: { x: 1 }, b: 5 }, { a: 3, b: { y: 1 } })).toEqual({ a: 3, b: { y: 1 } });
  });
});

describe('leafPointers and sourcesOf', () => {
  it('names each leaf by JSON pointer: an array is one leaf, keys escaped', () => {
    expect(leafPointers({ a: { b: [1, { c: 2 }] }, 'x/y': 1, 't~': { e: {} } })).toEqual(['/a/b', '/x~1y', '/t~0/e']);
  });

  it('gives each leaf the highest layer that set it', () => {
    const defaults = { a: { x: 1, y: 2 }, list: [1], z: 0 };
    const studio = { a: { y: 20 }, list: [2] };
    const project = { a: { x: 10 } };
    const layers = [
      { source: 'studio' as const, overrides: studio },
      { source: 'project' as const, overrides: project },
    ];
    const settings = mergeSettings(mergeSettings(defaults, studio), project);
    expect(sourcesOf(settings, layers)).toEqual({ '/a/x': 'project', '/a/y': 'studio', '/list': 'studio', '/z': 'default' });
  });
});

const SCHEMA_V2 = {
  type: 'object',
  required: ['fps', 'output'],
  properties: {
    fps: { type: 'integer', minimum: 1, maximum: 120 },
    codec: { type: 'string', enum: ['h264', 'prores'] },
    output: {
      type: 'object',
      required: ['dir'],
      properties: { dir: { type: 'string', minLength: 1 }, ext: { type: 'string', pattern: '^[a-z]+$' } },
    },
    tags: { type: 'array', items: { type: 'string' } },
  },
};

describe('resolveSettings', () => {
  const v2 = compileSettings(SCHEMA_V2 as never);
  const defaults = { fps: 24, codec: 'h264', output: { dir: '/out', ext: 'exr' }, tags: ['a'] };

  it('merges defaults, studio and project with sources and nothing ignored when all fit', () => {
    const out = resolveSettings(
      defaults,
      [
        { source: 'studio', overrides: { fps: 25, tags: ['s'] } },
        { source: 'project', overrides: { output: { ext: 'png' } } },
      ],
      v2,
    );
    expect(out.settings).toEqual({ fps: 25, codec: 'h264', output: { dir: '/out', ext: 'png' }, tags: ['s'] });
    expect(out.sources).toEqual({ '/fps': 'studio', '/codec': 'default', '/output/dir': 'default', '/output/ext': 'project', '/tags': 'studio' });
    expect(out.ignored).toEqual([]);
  });

  it('leaves out overrides that no longer fit (removed keys, wrong types, out of bounds) and names them', () => {
    const out = resolveSettings(
      defaults,
      [
        { source: 'studio', overrides: { fps: 500, retired_key: true, codec: 'prores' } },
        { source: 'project', overrides: { output: { ext: 'PNG!', dir: '/p' }, tags: 'not-a-list' } },
      ],
      v2,
    );
    expect(out.settings).toEqual({ fps: 24, codec: 'prores', output: { dir: '/p', ext: 'exr' }, tags: ['a'] });
    expect(out.ignored).toEqual(['/fps', '/output/ext', '/retired_key', '/tags']);
    expect(out.sources['/codec']).toBe('studio');
    expect(out.sources['/output/dir']).toBe('project');
    expect(out.sources['/fps']).toBe('default');
    expect(v2.fullErrors(out.settings)).toEqual([]);
  });

  it('leaves out an override whose merge would break the whole (a required key inside a new object)', () => {
    const schema = {
      type: 'object',
      properties: { render: { type: 'object', required: ['engine'], properties: { engine: { type: 'string' }, samples: { type: 'integer' } } } },
    };
    const v = compileSettings(schema as never);
    const out = resolveSettings({}, [{ source: 'project', overrides: { render: { samples: 8 } } }], v);
    expect(out.settings).toEqual({});
    expect(out.ignored).toEqual(['/render']);
    expect(out.sources).toEqual({});
  });

  it('keeps the result valid for the schema whatever the layers hold', () => {
    const layers = [
      { source: 'studio' as const, overrides: { output: 7, fps: 'x', zz: { q: 1 } } },
      { source: 'project' as const, overrides: { output: { dir: '' }, codec: null } },
    ];
    const out = resolveSettings(defaults, layers as never, v2);
    expect(v2.fullErrors(out.settings)).toEqual([]);
    expect(out.settings).toEqual(defaults);
    expect(out.ignored).toEqual(['/codec', '/fps', '/output', '/output/dir', '/zz']);
  });
});
