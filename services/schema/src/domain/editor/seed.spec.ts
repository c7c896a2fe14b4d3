import { describe, expect, it } from 'vitest';
import { seeded } from '../../../test/editor.world.js';
import { emptyDoc } from '../schema.types.js';
import { renameEventKind } from './edit.js';
import { seedBuiltins } from './seed.js';

describe('seeding and rename events', () => {
  it('seeds every built-in type as one event each, then nothing; a built-in field missing from a stored type is added alone', () => {
    const first = seedBuiltins(emptyDoc())!;
    expect(first.result.added).toEqual(first.doc.entity_types.map((t) => t.code));
    expect(first.changes.every((c) => c.kind === 'Schema.EntityType' && c.action === 'create')).toBe(true);
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
});
