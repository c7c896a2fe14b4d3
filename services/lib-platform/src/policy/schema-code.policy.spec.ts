import { describe, expect, it } from 'vitest';
import { FIELD_TYPES, isDefinitionCode, isFieldCode } from './schema-code.policy.js';

describe('schema codes', () => {
  it('field codes are lower snake case and never a record column', () => {
    for (const ok of ['code', 'cut_in', 'a', 'x'.repeat(64), 'a1_b2']) expect(isFieldCode(ok), ok).toBe(true);
    for (const bad of ['Code', '1a', '_a', 'a-b', 'x'.repeat(65), '', 'status', 'project_id', 'data', 'id', 7])
      expect(isFieldCode(bad), String(bad)).toBe(false);
  });

  it('definition codes allow letters, digits, _ - . but never a slash', () => {
    for (const ok of ['ip', 'needs-changes', 'Admin', 'mtoa', 'maya-2025.1', 'x'.repeat(64)]) expect(isDefinitionCode(ok), ok).toBe(true);
    for (const bad of ['', '-ip', 'a/b', 'a b', 'x'.repeat(65), 'é', null]) expect(isDefinitionCode(bad), String(bad)).toBe(false);
  });

  it('names the 14 field types', () => {
    expect(FIELD_TYPES).toHaveLength(14);
    expect(new Set(FIELD_TYPES).size).toBe(14);
  });
});
