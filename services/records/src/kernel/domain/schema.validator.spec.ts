/**
 * The schema validator: every field type accepted and refused, required fields and defaults,
 * status scope, Task step and priority codes, unknown keys, and transitions per role.
 */
import { AppError } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { compileSchema, type SchemaSnapshot } from './schema.snapshot.js';
import { checkCreate, checkTransition, checkUpdate, type LinkRef } from './schema.validator.js';

const P = '0190a000-0000-7000-8000-00000000000a';
const ID = '0190a000-0000-7000-8000-0000000000b1';

const SNAPSHOT: SchemaSnapshot = {
  version: 3,
  entity_types: [
    {
      code: 'Gadget',
      project_scoped: true,
      fields: [
        { code: 'label', type: 'text' },
        { code: 'count', type: 'integer' },
        { code: 'ratio', type: 'float' },
        { code: 'on', type: 'boolean' },
        { code: 'day', type: 'date' },
        { code: 'at', type: 'datetime' },
        { code: 'size', type: 'enum', options: [{ code: 'small' }, { code: 'large' }] },
        { code: 'tags', type: 'multi_enum', options: [{ code: 'red' }, { code: 'blue' }] },
        { code: 'shot', type: 'link', link_types: ['Shot'] },
        { code: 'anything', type: 'link' },
        { code: 'shots', type: 'multi_link', link_types: ['Shot', 'Asset'] },
        { code: 'meta', type: 'json' },
        { code: 'site', type: 'url' },
        { code: 'tint', type: 'color' },
        { code: 'length', type: 'duration' },
        { code: 'serial', type: 'text', required: true },
        { code: 'grade', type: 'enum', options: [{ code: 'a' }, { code: 'b' }], default: 'a' },
      ],
    },
    { code: 'Library', project_scoped: false, fields: [{ code: 'name', type: 'text' }] },
    {
      code: 'Task',
      project_scoped: true,
      fields: [
        { code: 'name', type: 'text' },
        { code: 'step', type: 'text' },
        { code: 'priority', type: 'text' },
      ],
    },
  ],
  statuses: [
    { code: 'wip', entity_types: [] },
    { code: 'ok', entity_types: ['Gadget'] },
    { code: 'lib', entity_types: ['Library'] },
  ],
  steps: [{ code: 'anim' }, { code: 'comp' }],
  priorities: [{ code: 'high' }],
  transitions: {
    Gadget: [
      { from: 'wip', to: ['ok'], roles: ['Supervisor'] },
      { from: 'ok', to: ['wip'] },
    ],
    Library: [],
  },
};
const schema = compileSchema(3, SNAPSHOT);

const create = (data: Record<string, unknown>, extra: { entityType?: string; projectId?: string | null; status?: string | null } = {}) =>
  checkCreate(schema, { entityType: extra.entityType ?? 'Gadget', projectId: extra.projectId === undefined ? P : extra.projectId, status: extra.status, data });

/** Problems of writing `value` into field `code` (plus the required serial). */
const problemsOf = (code: string, value: unknown) => create({ serial: 'x', [code]: value }).problems;
const accepted = (code: string, value: unknown) => expect(problemsOf(code, value), `${code} = ${JSON.stringify(value)}`).toEqual([]);
const refused = (code: string, value: unknown, type?: string) => {
  const problems = problemsOf(code, value);
  expect(problems.length, `${code} = ${JSON.stringify(value)}`).toBeGreaterThan(0);
  expect(problems[0]!.loc.slice(0, 2)).toEqual(['data', code]);
  if (type) expect(problems[0]!.type).toBe(type);
};

describe('field types', () => {
  it('text', () => {
    accepted('label', 'hello');
    accepted('label', '');
    refused('label', 3, 'string_type');
    refused('label', ['a'], 'string_type');
  });

  it('integer', () => {
    accepted('count', 0);
    accepted('count', -12);
    refused('count', 1.5, 'int_type');
    refused('count', '3', 'int_type');
    refused('count', true, 'int_type');
  });

  it('float', () => {
    accepted('ratio', 1.5);
    accepted('ratio', 2);
    refused('ratio', '1.5', 'float_type');
    refused('ratio', {}, 'float_type');
  });

  it('boolean', () => {
    accepted('on', true);
    accepted('on', false);
    refused('on', 'true', 'bool_type');
    refused('on', 1, 'bool_type');
  });

  it('date is YYYY-MM-DD and a real day', () => {
    accepted('day', '2026-02-28');
    accepted('day', '2024-02-29');
    refused('day', '2026-02-30', 'date_parsing');
    refused('day', '2026-2-3', 'date_parsing');
    refused('day', '2026-02-03T10:00:00Z', 'date_parsing');
    refused('day', 20260203, 'date_parsing');
  });

  it('datetime is ISO 8601 with a zone', () => {
    accepted('at', '2026-11-23T14:05:00Z');
    accepted('at', '2026-11-23T14:05:00.123456+01:00');
    accepted('at', '2026-11-23T14:05Z');
    refused('at', '2026-11-23T14:05:00', 'datetime_parsing');
    refused('at', '2026-11-23', 'datetime_parsing');
    refused('at', '2026-13-23T14:05:00Z', 'datetime_parsing');
    refused('at', 1700000000, 'datetime_parsing');
  });

  it('enum takes an option code', () => {
    accepted('size', 'small');
    refused('size', 'medium', 'enum');
    refused('size', ['small'], 'enum');
    expect(problemsOf('size', 'medium')[0]!.msg).toContain("'small' or 'large'");
  });

  it('multi_enum takes an array of distinct option codes', () => {
    accepted('tags', []);
    accepted('tags', ['red', 'blue']);
    refused('tags', 'red', 'list_type');
    expect(problemsOf('tags', ['red', 'green'])).toEqual([expect.objectContaining({ loc: ['data', 'tags', 1], type: 'enum' })]);
    expect(problemsOf('tags', ['red', 'red'])).toEqual([expect.objectContaining({ loc: ['data', 'tags', 1], type: 'duplicate' })]);
  });

  it('link takes {type, id} of an allowed type and is returned for the store to check', () => {
    const ok = create({ serial: 'x', shot: { type: 'Shot', id: ID }, anything: { type: 'Whatever', id: ID } });
    expect(ok.problems).toEqual([]);
    expect(ok.links).toEqual<LinkRef[]>([
      { type: 'Shot', id: ID, loc: ['data', 'shot'] },
      { type: 'Whatever', id: ID, loc: ['data', 'anything'] },
    ]);
    refused('shot', { type: 'Asset', id: ID }, 'link_type');
    refused('shot', { type: 'Shot', id: 'nope' }, 'uuid_parsing');
    refused('shot', { type: 'Shot' }, 'uuid_parsing');
    refused('shot', { id: ID }, 'missing');
    refused('shot', { type: 'Shot', id: ID, name: 'sh010' }, 'extra_forbidden');
    refused('shot', ID, 'link_type');
    expect(create({ serial: 'x', shot: { type: 'Asset', id: ID } }).links).toEqual([]);
  });

  it('multi_link takes an array of links', () => {
    const ok = create({
      serial: 'x',
      shots: [
        { type: 'Shot', id: ID },
        { type: 'Asset', id: ID },
      ],
    });
    expect(ok.problems).toEqual([]);
    expect(ok.links.map((l) => l.loc)).toEqual([
      ['data', 'shots', 0],
      ['data', 'shots', 1],
    ]);
    refused('shots', { type: 'Shot', id: ID }, 'list_type');
    expect(
      problemsOf('shots', [
        { type: 'Shot', id: ID },
        { type: 'User', id: ID },
      ]),
    ).toEqual([expect.objectContaining({ loc: ['data', 'shots', 1, 'type'], type: 'link_type' })]);
  });

  it('json takes anything', () => {
    for (const v of [1, 'a', [1, { b: 2 }], { deep: { er: [null] } }, false]) accepted('meta', v);
  });

  it('url is an absolute http(s) URL', () => {
    accepted('site', 'https://example.com/a?b=c');
    accepted('site', 'http://localhost:8080');
    refused('site', 'ftp://example.com', 'url_parsing');
    refused('site', 'example.com', 'url_parsing');
    refused('site', 'javascript:alert(1)', 'url_parsing');
    refused('site', 42, 'url_parsing');
  });

  it('color is #rrggbb', () => {
    accepted('tint', '#00ff7F');
    refused('tint', '#0f0', 'color_parsing');
    refused('tint', 'red', 'color_parsing');
    refused('tint', '#00ff7f00', 'color_parsing');
  });

  it('duration is whole minutes or an ISO 8601 duration', () => {
    accepted('length', 90);
    accepted('length', 0);
    accepted('length', 'PT1H30M');
    accepted('length', 'P2D');
    accepted('length', 'P1DT2H');
    refused('length', -5, 'duration_parsing');
    refused('length', 1.5, 'duration_parsing');
    refused('length', 'P', 'duration_parsing');
    refused('length', 'PT', 'duration_parsing');
    refused('length', '90 minutes', 'duration_parsing');
  });
});

describe('checkCreate', () => {
  it('names every unknown key, bad value and missing required field at once', () => {
    const { problems } = create({ colour: 'red', count: 'x', size: 'huge' }, { status: 'lib', projectId: null });
    expect(problems.map((p) => [p.loc.join('.'), p.type]).sort()).toEqual(
      [
        ['project_id', 'missing'],
        ['status', 'status'],
        ['data.colour', 'extra_forbidden'],
        ['data.count', 'int_type'],
        ['data.size', 'enum'],
        ['data.serial', 'missing'],
      ].sort(),
    );
  });

  it('applies defaults to absent fields only', () => {
    expect(create({ serial: 'x' }).data).toEqual({ serial: 'x', grade: 'a' });
    expect(create({ serial: 'x', grade: 'b' }).data).toEqual({ serial: 'x', grade: 'b' });
  });

  it('answers 404 for a type the schema does not have', () => {
    expect(() => create({}, { entityType: 'Widget' })).toThrow(AppError);
    try {
      create({}, { entityType: 'Widget' });
    } catch (err) {
      expect((err as AppError).kind).toBe('not_found');
    }
  });

  it('a studio-wide type needs no project; statuses are scoped by type', () => {
    expect(create({ name: 'n' }, { entityType: 'Library', projectId: null, status: 'lib' }).problems).toEqual([]);
    expect(create({ name: 'n' }, { entityType: 'Library', projectId: null, status: 'wip' }).problems).toEqual([]);
    expect(create({ serial: 'x' }, { status: 'ok' }).problems).toEqual([]);
    expect(create({ serial: 'x' }, { status: 'nope' }).problems).toEqual([expect.objectContaining({ loc: ['status'], type: 'status' })]);
  });

  it('Task step and priority must be codes of the schema', () => {
    expect(create({ step: 'anim', priority: 'high' }, { entityType: 'Task' }).problems).toEqual([]);
    expect(
      create({ step: 'lighting', priority: 'low' }, { entityType: 'Task' })
        .problems.map((p) => p.loc.join('.'))
        .sort(),
    ).toEqual(['data.priority', 'data.step']);
  });
});

describe('checkUpdate', () => {
  const update = (patch: Record<string, unknown> | undefined, extra: { status?: string | null; statusChanged?: boolean } = {}) =>
    checkUpdate(schema, {
      entityType: 'Gadget',
      projectId: P,
      statusChanged: extra.statusChanged ?? false,
      status: extra.status ?? null,
      patch,
      merged: { serial: 'x', ...patch },
    });

  it('checks only the keys the patch sets', () => {
    expect(update({ count: 2 }).problems).toEqual([]);
    expect(update({ count: 'two', bogus: 1 }).problems.map((p) => p.loc.join('.'))).toEqual(['data.bogus', 'data.count'].sort().reverse());
  });

  it('a required field cannot be removed; other keys can', () => {
    expect(update({ count: null }).problems).toEqual([]);
    expect(update({ serial: null }).problems).toEqual([expect.objectContaining({ loc: ['data', 'serial'], type: 'missing' })]);
  });

  it('status is checked when it changes', () => {
    expect(update(undefined, { status: 'lib', statusChanged: false }).problems).toEqual([]);
    expect(update(undefined, { status: 'lib', statusChanged: true }).problems).toEqual([expect.objectContaining({ loc: ['status'] })]);
  });
});

describe('checkTransition', () => {
  const conflict = (fn: () => void) => {
    try {
      fn();
    } catch (err) {
      return err instanceof AppError ? err.code : 'other';
    }
    return undefined;
  };

  it('allows only listed changes for the listed roles, Admins included', () => {
    expect(conflict(() => checkTransition(schema, 'Gadget', 'wip', 'ok', 'Supervisor'))).toBeUndefined();
    expect(conflict(() => checkTransition(schema, 'Gadget', 'wip', 'ok', 'Admin'))).toBe('transition_not_allowed');
    expect(conflict(() => checkTransition(schema, 'Gadget', 'ok', 'wip', 'Artist'))).toBeUndefined();
    expect(conflict(() => checkTransition(schema, 'Gadget', 'ok', 'lib', 'Admin'))).toBe('transition_not_allowed');
  });

  it('a type without transitions, or with [], allows every change; a first status is not a transition', () => {
    expect(conflict(() => checkTransition(schema, 'Library', 'lib', 'wip', 'Artist'))).toBeUndefined();
    expect(conflict(() => checkTransition(schema, 'Task', 'wip', 'ok', 'Artist'))).toBeUndefined();
    expect(conflict(() => checkTransition(schema, 'Gadget', null, 'ok', 'Artist'))).toBeUndefined();
  });
});
