/**
 * Preset and Project rewrites of a rename: the code changes only where it stands as a type,
 * status, step, priority or option, never in a text value spelled the same.
 */
import { describe, expect, it } from 'vitest';
import { rewritePresetData, rewriteSmallRecord, type CodeRename } from './schema.rename.js';

const r = (kind: CodeRename['kind'], from: string, to: string, entityType = '', field = ''): CodeRename => ({
  journalId: 'j',
  kind,
  entityType,
  field,
  from,
  to,
});

describe('rewritePresetData', () => {
  it('status: conditions on status, nested groups included; not text fields spelled the same', () => {
    const data = {
      target_type: 'Shot',
      filters: {
        filter_operator: 'any',
        filters: [
          ['status', 'in', ['ip', 'wtg']],
          ['description', 'contains', 'ip'],
          { filter_operator: 'all', filters: [['entity.Shot.status', 'is', 'ip']] },
        ],
      },
    };
    expect(rewritePresetData(data, r('status', 'ip', 'wip'))).toEqual({
      target_type: 'Shot',
      filters: {
        filter_operator: 'any',
        filters: [
          ['status', 'in', ['wip', 'wtg']],
          ['description', 'contains', 'ip'],
          { filter_operator: 'all', filters: [['entity.Shot.status', 'is', 'wip']] },
        ],
      },
    });
  });

  it('step and priority: conditions on those fields only', () => {
    const data = {
      target_type: 'Task',
      filters: [
        ['step', 'is', 'anim'],
        ['name', 'is', 'anim'],
        ['priority', 'not_in', ['anim']],
      ],
    };
    expect(rewritePresetData(data, r('step', 'anim', 'animation'))!.filters).toEqual([
      ['step', 'is', 'animation'],
      ['name', 'is', 'anim'],
      ['priority', 'not_in', ['anim']],
    ]);
    expect(rewritePresetData(data, r('priority', 'anim', 'x'))!.filters).toEqual([
      ['step', 'is', 'anim'],
      ['name', 'is', 'anim'],
      ['priority', 'not_in', ['x']],
    ]);
  });

  it('option: the field of that type, directly or through a hop', () => {
    const shots = {
      target_type: 'Asset',
      filters: [
        ['asset_type', 'is', 'prop'],
        ['entity.Shot.asset_type', 'is', 'prop'],
      ],
    };
    expect(rewritePresetData(shots, r('option', 'prop', 'item', 'Asset', 'asset_type'))!.filters).toEqual([
      ['asset_type', 'is', 'item'],
      ['entity.Shot.asset_type', 'is', 'prop'],
    ]);
    expect(
      rewritePresetData({ target_type: 'Shot', filters: [['asset_type', 'is', 'prop']] }, r('option', 'prop', 'item', 'Asset', 'asset_type')),
    ).toBeUndefined();
  });

  it('entity_type: target type, path hops, type_is values, entity_type conditions, link values, fields and order', () => {
    const data = {
      target_type: 'Sequence',
      filters: [
        ['entity.Sequence.code', 'is', 'Sequence'],
        ['entity', 'type_is', 'Sequence'],
        ['entity_type', 'in', ['Sequence', 'Shot']],
        ['entity', 'is', { type: 'Sequence', id: 'x' }],
      ],
      fields: ['code', 'entity.Sequence.code'],
      order: [{ field: 'entity.Sequence.code', direction: 'asc' }],
    };
    expect(rewritePresetData(data, r('entity_type', 'Sequence', 'Seq'))).toEqual({
      target_type: 'Seq',
      filters: [
        ['entity.Seq.code', 'is', 'Sequence'],
        ['entity', 'type_is', 'Seq'],
        ['entity_type', 'in', ['Seq', 'Shot']],
        ['entity', 'is', { type: 'Seq', id: 'x' }],
      ],
      fields: ['code', 'entity.Seq.code'],
      order: [{ field: 'entity.Seq.code', direction: 'asc' }],
    });
  });

  it('answers undefined when nothing changes', () => {
    expect(rewritePresetData({ target_type: 'Shot', filters: [['code', 'is', 'ip']] }, r('status', 'ip', 'wip'))).toBeUndefined();
  });
});

describe('rewriteSmallRecord', () => {
  it("renames a step's keys in a project's per-step overrides", () => {
    const data = { name: 'P', overrides: { applications: ['anim'], applicationsByStep: { anim: ['maya'] }, toolsByStep: { anim: [], comp: ['x/1'] } } };
    expect(rewriteSmallRecord('Project', data, r('step', 'anim', 'animation'))).toEqual({
      name: 'P',
      overrides: { applications: ['anim'], applicationsByStep: { animation: ['maya'] }, toolsByStep: { animation: [], comp: ['x/1'] } },
    });
    expect(rewriteSmallRecord('Project', data, r('status', 'anim', 'x'))).toBeUndefined();
    expect(rewriteSmallRecord('Shot', data, r('step', 'anim', 'x'))).toBeUndefined();
  });
});
