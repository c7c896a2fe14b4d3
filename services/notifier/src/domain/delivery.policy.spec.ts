import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ContractEvent } from '@reelbase/lib-platform';
import { backoffMs, chatText, matches, signature, webhookBody } from './delivery.policy.js';

const event = (over: Partial<ContractEvent> = {}): ContractEvent => ({
  id: 42,
  entity_type: 'Shot',
  entity_id: '0190a5a0-0000-7000-8000-000000000001',
  project_id: null,
  action: 'update',
  actor: '0190a5a0-0000-7000-8000-0000000000aa',
  changes: { status: 'ip' },
  created_at: '2026-01-01T00:00:00.000000Z',
  ...over,
});

describe('delivery policy', () => {
  it('matches on entity type and action, empty lists matching everything', () => {
    expect(matches({ entityTypes: [], actions: [] }, event())).toBe(true);
    expect(matches({ entityTypes: ['Shot'], actions: ['update'] }, event())).toBe(true);
    expect(matches({ entityTypes: ['Asset'], actions: [] }, event())).toBe(false);
    expect(matches({ entityTypes: [], actions: ['create'] }, event())).toBe(false);
  });

  it('sends the event as GET /events shows it, and signs the raw body', () => {
    const body = webhookBody(event());
    expect(JSON.parse(body)).toEqual(event());
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['id', 'entity_type', 'entity_id', 'project_id', 'action', 'actor', 'changes', 'created_at']);
    expect(signature('s3cret', body)).toBe(`sha256=${createHmac('sha256', 's3cret').update(body).digest('hex')}`);
  });

  it('writes a chat line a person can read', () => {
    expect(chatText(event(), { actor: 'Ana Silva', record: 'SH010' })).toBe('Ana Silva updated Shot SH010: status → ip (event 42)');
    expect(
      chatText(event({ action: 'create', actor: null, entity_type: 'Note', changes: { content: 'a <b> & c', guest_name: 'Client' } }), {
        actor: null,
        record: null,
      }),
    ).toBe('Client (guest) created Note 0190a5a0: “a &lt;b&gt; &amp; c” (event 42)');
  });

  it('backs off exponentially with full jitter, capped', () => {
    const s = { baseMs: 100, maxMs: 1000, windowMs: 10_000 };
    expect(backoffMs(s, 1, () => 0.999)).toBe(99);
    expect(backoffMs(s, 3, () => 0.5)).toBe(200);
    expect(backoffMs(s, 30, () => 0.999)).toBe(999);
    expect(backoffMs(s, 3, () => 0)).toBe(0);
  });
});
