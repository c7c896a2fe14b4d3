import { describe, expect, it } from 'vitest';
import { CONTRACT_EVENT_FIELDS, encodeContractEvent, parseContractEvent, type ContractEvent } from './event.js';

const event: ContractEvent = {
  id: 42,
  entity_type: 'Shot',
  entity_id: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f71',
  project_id: null,
  action: 'update',
  actor: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f73',
  changes: { status: 'ip' },
  created_at: '2026-03-01T10:20:30.123456Z',
};

describe('ContractEvent on the live subject', () => {
  it('round-trips through the shared encoder and parser, in the documented field order', () => {
    const text = encodeContractEvent({ ...event, extra: true } as ContractEvent);
    expect(Object.keys(JSON.parse(text) as object)).toEqual([...CONTRACT_EVENT_FIELDS]);
    expect(parseContractEvent(new TextEncoder().encode(text))).toEqual({ ok: true, event });
  });

  it.each(CONTRACT_EVENT_FIELDS.map((f) => [f]))('refuses a message whose %s was renamed, naming the field', (field) => {
    const { [field]: value, ...rest } = event as unknown as Record<string, unknown>;
    expect(parseContractEvent(JSON.stringify({ ...rest, [`${field}_renamed`]: value }))).toEqual({ ok: false, reason: `${field} is missing` });
  });

  it.each([
    ['id', { ...event, id: '42' }],
    ['id', { ...event, id: 0 }],
    ['action', { ...event, action: 'revive' }],
    ['changes', { ...event, changes: null }],
    ['project_id', { ...event, project_id: 7 }],
  ])('refuses a bad %s', (field, bad) => {
    const r = parseContractEvent(JSON.stringify(bad));
    expect(!r.ok && r.reason).toContain(field);
  });

  it('refuses what is not a JSON object', () => {
    expect(parseContractEvent('nope').ok).toBe(false);
    expect(parseContractEvent('[]').ok).toBe(false);
  });
});
