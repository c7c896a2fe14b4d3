import { describe, expect, it } from 'vitest';
import { parseEventPayload } from './event-payload.js';

const valid = {
  event_id: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f70',
  entity_type: 'Shot',
  entity_id: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f71',
  project_id: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f72',
  action: 'update',
  actor: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f73',
  changes: { status: 'ip', data: { nested: [1, 2] } },
  occurred_at: '2026-03-01T10:20:30.123456Z',
};

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

describe('parseEventPayload', () => {
  it('accepts the relay payload', () => {
    const r = parseEventPayload(enc(valid));
    expect(r).toEqual({ ok: true, event: valid });
  });

  it('treats a missing or null project_id and actor as null', () => {
    const { project_id: _p, ...rest } = valid;
    const r = parseEventPayload(enc({ ...rest, actor: null }));
    expect(r.ok && r.event.project_id).toBeNull();
    expect(r.ok && r.event.actor).toBeNull();
  });

  it('lower-cases identifiers so duplicates compare equal', () => {
    const r = parseEventPayload(enc({ ...valid, event_id: valid.event_id.toUpperCase() }));
    expect(r.ok && r.event.event_id).toBe(valid.event_id);
  });

  it.each([
    ['not JSON', '{nope'],
    ['not an object', '[1,2]'],
    ['null', 'null'],
    ['bad event_id', { ...valid, event_id: 'abc' }],
    ['missing entity_type', { ...valid, entity_type: '' }],
    ['bad entity_id', { ...valid, entity_id: 42 }],
    ['bad project_id', { ...valid, project_id: 'p1' }],
    ['bad action', { ...valid, action: 'revive' }],
    ['bad actor', { ...valid, actor: 'someone' }],
    ['changes is an array', { ...valid, changes: [] }],
    ['changes missing', { ...valid, changes: undefined }],
    ['changes holds NUL', { ...valid, changes: { name: 'a\u0000b' } }],
    ['bad occurred_at', { ...valid, occurred_at: 'yesterday' }],
    ['impossible date', { ...valid, occurred_at: '2026-13-45T10:20:30Z' }],
  ])('rejects %s', (_name, payload) => {
    const r = parseEventPayload(enc(payload));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toBeTruthy();
  });

  it('rejects bytes that are not UTF-8', () => {
    expect(parseEventPayload(new Uint8Array([0xff, 0xfe, 0x7b])).ok).toBe(false);
  });

  it('accepts an escaped backslash that merely looks like a NUL escape', () => {
    const r = parseEventPayload(enc({ ...valid, changes: { path: 'C:\\u0000dir' } }));
    expect(r.ok).toBe(true);
  });
});
