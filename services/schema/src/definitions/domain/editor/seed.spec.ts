import { describe, expect, it } from 'vitest';
import { seeded } from '../../../../test/editor.world.js';
import { emptyDoc } from '../schema.types.js';
import { renameEventKind } from './edit.js';
import { seedBuiltins } from './seed.js';
import { BUILTIN_STATUSES } from '../builtins.js';

describe('seeding and rename events', () => {
  it('seeds every built-in type and status as one event each, then nothing; a built-in field missing from a stored type is added alone', () => {
    const first = seedBuiltins(emptyDoc())!;
    expect(first.result.added).toEqual([...first.doc.entity_types.map((t) => t.code), ...BUILTIN_STATUSES.map((s) => `status ${s.code}`)]);
    expect(first.changes.every((c) => (c.kind === 'Schema.EntityType' || c.kind === 'Schema.Status') && c.action === 'create')).toBe(true);
    expect(seedBuiltins(first.doc)).toBeNull();
    const doc = seeded();
    const shot = doc.entity_types.find((t) => t.code === 'Shot')!;
    shot.fields = shot.fields.filter((f) => f.code !== 'cut_out');
    const again = seedBuiltins(doc)!;
    expect(again.result).toEqual({ added: ['Shot.cut_out'] });
    expect(again.changes).toEqual([expect.objectContaining({ kind: 'Schema.Field', key: 'Shot.cut_out', action: 'create' })]);
  });

  it('reports each rename kind as the event kind of its definition', () => {
    expect(['entity_type', 'status', 'step', 'priority', 'option'].map((k) => renameEventKind(k as never))).toEqual([
      'Schema.EntityType',
      'Schema.Status',
      'Schema.Step',
      'Schema.Priority',
      'Schema.Field',
    ]);
  });

  it("adds FarmJob to a studio status of a built-in status's code; one scoped to every type is left as it is", () => {
    const doc = emptyDoc();
    doc.statuses.push({ code: 'done', name: 'Done', color: null, icon: null, state: 'done', entity_types: ['Task'] });
    doc.statuses.push({ code: 'paused', name: 'Paused', color: null, icon: null, state: 'blocked', entity_types: [] });
    const out = seedBuiltins(doc)!;
    expect(out.doc.statuses.find((s) => s.code === 'done')!.entity_types).toEqual(['Task', 'FarmJob']);
    expect(out.doc.statuses.find((s) => s.code === 'paused')!.entity_types).toEqual([]);
    expect(out.result.added).toContain('status done for FarmJob');
    expect(out.result.added).not.toContain('status paused');
  });
});
