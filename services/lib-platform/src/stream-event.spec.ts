import { describe, expect, it } from 'vitest';
import { encodeStreamBatch, encodeStreamEvent, parseStreamEvent, parseStreamMessage, STREAM_EVENT_FIELDS, type StreamEvent } from './stream-event.js';

const valid: StreamEvent = {
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

/** `valid` with field `from` renamed to `to`, as a sender with a renamed field would send it. */
function renamed(from: string, to: string): Record<string, unknown> {
  const { [from]: value, ...rest } = valid as unknown as Record<string, unknown>;
  return { ...rest, [to]: value };
}

describe('encodeStreamEvent → parseStreamEvent', () => {
  it('round-trips every field', () => {
    expect(parseStreamEvent(enc(encodeStreamEvent(valid)))).toEqual({ ok: true, event: valid });
    const guest = { ...valid, actor: null, project_id: null, action: 'create' as const };
    expect(parseStreamEvent(encodeStreamEvent(guest))).toEqual({ ok: true, event: guest });
  });

  it('keeps the truncation flag and nothing the type does not declare', () => {
    const text = encodeStreamEvent({ ...valid, changes: {}, changes_truncated: true, extra: 1 } as StreamEvent);
    expect(Object.keys(JSON.parse(text) as object)).toEqual([...STREAM_EVENT_FIELDS, 'changes_truncated']);
    expect(parseStreamEvent(text)).toEqual({ ok: true, event: { ...valid, changes: {}, changes_truncated: true } });
  });
});

describe('parseStreamEvent', () => {
  it('accepts the relay payload', () => {
    const r = parseStreamEvent(enc(valid));
    expect(r).toEqual({ ok: true, event: valid });
  });

  it('lower-cases identifiers so duplicates compare equal', () => {
    const r = parseStreamEvent(enc({ ...valid, event_id: valid.event_id.toUpperCase(), project_id: valid.project_id!.toUpperCase() }));
    expect(r.ok && r.event.event_id).toBe(valid.event_id);
    expect(r.ok && r.event.project_id).toBe(valid.project_id);
  });

  it.each(STREAM_EVENT_FIELDS.map((f) => [f]))('refuses a message whose %s was renamed, naming the field', (field) => {
    const r = parseStreamEvent(enc(renamed(field, `${field}_renamed`)));
    expect(r).toEqual({ ok: false, reason: `${field} is missing` });
  });

  it('refuses a missing project_id or actor rather than reading it as null', () => {
    const { project_id: _p, ...noProject } = valid;
    expect(parseStreamEvent(enc(noProject))).toEqual({ ok: false, reason: 'project_id is missing' });
    const { actor: _a, ...noActor } = valid;
    expect(parseStreamEvent(enc(noActor))).toEqual({ ok: false, reason: 'actor is missing' });
  });

  it.each([
    ['not JSON', '{nope', 'payload is not JSON'],
    ['not an object', '[1,2]', 'payload is not an object'],
    ['null', 'null', 'payload is not an object'],
    ['bad event_id', { ...valid, event_id: 'abc' }, 'event_id'],
    ['empty entity_type', { ...valid, entity_type: '' }, 'entity_type'],
    ['bad entity_id', { ...valid, entity_id: 42 }, 'entity_id'],
    ['bad project_id', { ...valid, project_id: 'p1' }, 'project_id'],
    ['bad action', { ...valid, action: 'revive' }, 'action'],
    ['bad actor', { ...valid, actor: 'someone' }, 'actor'],
    ['changes is an array', { ...valid, changes: [] }, 'changes'],
    ['changes missing', { ...valid, changes: undefined }, 'changes'],
    ['changes holds NUL', { ...valid, changes: { name: 'a\u0000b' } }, 'changes'],
    ['bad occurred_at', { ...valid, occurred_at: 'yesterday' }, 'occurred_at'],
    ['impossible date', { ...valid, occurred_at: '2026-13-45T10:20:30Z' }, 'occurred_at'],
  ])('rejects %s', (_name, payload, field) => {
    const r = parseStreamEvent(enc(payload));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toContain(field);
  });

  it('rejects bytes that are not UTF-8', () => {
    expect(parseStreamEvent(new Uint8Array([0xff, 0xfe, 0x7b]))).toEqual({ ok: false, reason: 'payload is not UTF-8' });
  });

  it('accepts an escaped backslash that merely looks like a NUL escape', () => {
    const r = parseStreamEvent(enc({ ...valid, changes: { path: 'C:\\u0000dir' } }));
    expect(r.ok).toBe(true);
  });
});

describe('encodeStreamBatch → parseStreamMessage', () => {
  it('reads one event, or a batch of them in order', () => {
    expect(parseStreamMessage(encodeStreamEvent(valid))).toEqual({ ok: true, events: [valid] });
    const second = { ...valid, event_id: '0190f5a4-8d2e-7c3b-9a1f-2b3c4d5e6f79', action: 'create' as const };
    expect(parseStreamMessage(enc(encodeStreamBatch([valid, second])))).toEqual({ ok: true, events: [valid, second] });
  });

  it('refuses a whole batch for one bad event, naming it, and an empty batch', () => {
    const text = encodeStreamBatch([valid, { ...valid, entity_id: 'nope' }]);
    expect(parseStreamMessage(text)).toEqual({ ok: false, reason: 'batch[1]: entity_id must be a UUID' });
    expect(parseStreamMessage('{"batch":[]}')).toEqual({ ok: false, reason: 'batch must be a non-empty array' });
  });
});
