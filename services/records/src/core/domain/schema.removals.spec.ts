import { describe, expect, it } from 'vitest';
import { refuseInUse, removals } from './schema.removals.js';
import type { SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import { type CodeUsage } from './core.ports.js';

const held: SchemaSnapshot = {
  version: 3,
  entity_types: [
    {
      code: 'Shot',
      project_scoped: true,
      fields: [
        { code: 'code', type: 'text' },
        { code: 'lens', type: 'enum', options: [{ code: 'a' }, { code: 'b' }] },
      ],
    },
    { code: 'Asset', project_scoped: true, fields: [{ code: 'code', type: 'text' }] },
    { code: 'Gadget', project_scoped: true, fields: [] },
  ],
  statuses: [{ code: 'ip' }, { code: 'omit', entity_types: ['Shot', 'Asset'] }, { code: 'gone' }],
  steps: [{ code: 'anim' }, { code: 'comp' }],
  priorities: [{ code: 'low' }, { code: 'high' }],
};

const empty = (): CodeUsage => ({ entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {}, options: {}, status_types: {} });

describe('removals', () => {
  it('finds nothing when the snapshot only adds', () => {
    const next = structuredClone(held);
    next.version = 4;
    next.entity_types.push({ code: 'Prop', project_scoped: true, fields: [] });
    next.statuses.push({ code: 'new' });
    expect(removals(held, next)).toEqual([]);
  });

  it('names every removed type, field, option, status, status scope, step and priority', () => {
    const next: SchemaSnapshot = {
      version: 4,
      entity_types: [
        { code: 'Shot', project_scoped: true, fields: [{ code: 'lens', type: 'enum', options: [{ code: 'a' }] }] },
        { code: 'Asset', project_scoped: true, fields: [{ code: 'code', type: 'text' }] },
      ],
      statuses: [
        { code: 'ip', entity_types: ['Shot', 'Asset'] },
        { code: 'omit', entity_types: ['Shot'] },
      ],
      steps: [{ code: 'anim' }],
      priorities: [{ code: 'high' }],
    };
    expect(removals(held, next).map((r) => `${r.kind}:${r.key}`)).toEqual([
      'fields:Shot.code',
      'options:Shot.lens.b',
      'entity_types:Gadget',
      'status_types:Gadget.ip',
      'status_types:Asset.omit',
      'statuses:gone',
      'steps:comp',
      'priorities:low',
    ]);
  });

  it('refuses the first removed code still in use with 409 code_in_use and its usage', () => {
    const next = structuredClone(held);
    next.statuses = next.statuses.filter((s) => s.code !== 'gone');
    const list = removals(held, next);
    expect(() => refuseInUse(list, empty())).not.toThrow();
    const usage = empty();
    usage.statuses.gone = 2;
    expect(() => refuseInUse(list, usage)).toThrow(
      expect.objectContaining({ kind: 'conflict', code: 'code_in_use', extra: { usage: 2 }, message: 'status gone is still used by 2 records' }),
    );
  });
});
