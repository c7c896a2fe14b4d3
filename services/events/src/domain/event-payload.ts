/**
 * The payload of one EVENTS stream message, as the records outbox relay publishes it, and
 * the strict check that keeps anything the log's columns would reject out of a batch: one
 * bad message must be skipped, never block the stream.
 */
import { isUuid } from '@reelbase/lib-platform';

export const ACTIONS = ['create', 'update', 'delete'] as const;
export type Action = (typeof ACTIONS)[number];

/** A validated event as it arrives from the stream. */
export interface IncomingEvent {
  event_id: string;
  entity_type: string;
  entity_id: string;
  project_id: string | null;
  action: Action;
  actor: string | null;
  changes: Record<string, unknown>;
  occurred_at: string;
}

export type ParseResult = { ok: true; event: IncomingEvent } | { ok: false; reason: string };

// PostgreSQL's timestamptz accepts more than this, but anything else is not what the relay sends.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/;
const MAX_ENTITY_TYPE = 200;

const decoder = new TextDecoder('utf-8', { fatal: true });

function optionalUuid(v: unknown): string | null | undefined {
  if (v === null || v === undefined) return null;
  return isUuid(v) ? v.toLowerCase() : undefined;
}

/** True when `s` holds a NUL character, which a jsonb value cannot store. */
function hasNul(s: string): boolean {
  return s.includes('\u0000');
}

/** True when any key or string inside `v` holds a NUL character. */
function deepHasNul(v: unknown): boolean {
  if (typeof v === 'string') return hasNul(v);
  if (Array.isArray(v)) return v.some(deepHasNul);
  if (typeof v === 'object' && v !== null) {
    return Object.entries(v).some(([k, x]) => hasNul(k) || deepHasNul(x));
  }
  return false;
}

/** Decodes and checks one message payload. */
export function parseEventPayload(data: Uint8Array | string): ParseResult {
  let text: string;
  try {
    text = typeof data === 'string' ? data : decoder.decode(data);
  } catch {
    return { ok: false, reason: 'payload is not UTF-8' };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'payload is not JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'payload is not an object' };
  const p = raw as Record<string, unknown>;
  if (!isUuid(p.event_id)) return { ok: false, reason: 'event_id must be a UUID' };
  if (typeof p.entity_type !== 'string' || p.entity_type.length === 0 || p.entity_type.length > MAX_ENTITY_TYPE || hasNul(p.entity_type)) {
    return { ok: false, reason: 'entity_type must be a non-empty string' };
  }
  if (!isUuid(p.entity_id)) return { ok: false, reason: 'entity_id must be a UUID' };
  const projectId = optionalUuid(p.project_id);
  if (projectId === undefined) return { ok: false, reason: 'project_id must be a UUID or null' };
  if (!ACTIONS.includes(p.action as Action)) return { ok: false, reason: 'action must be create, update or delete' };
  const actor = optionalUuid(p.actor);
  if (actor === undefined) return { ok: false, reason: 'actor must be a UUID or null' };
  if (typeof p.changes !== 'object' || p.changes === null || Array.isArray(p.changes)) {
    return { ok: false, reason: 'changes must be an object' };
  }
  // JSON.parse accepts "\u0000" but jsonb does not; such a row would fail its whole batch.
  if (text.includes('\\u0000') && deepHasNul(p.changes)) return { ok: false, reason: 'payload contains a NUL character' };
  if (typeof p.occurred_at !== 'string' || !ISO_TIMESTAMP.test(p.occurred_at) || Number.isNaN(Date.parse(p.occurred_at))) {
    return { ok: false, reason: 'occurred_at must be an ISO 8601 timestamp' };
  }
  return {
    ok: true,
    event: {
      event_id: p.event_id.toLowerCase(),
      entity_type: p.entity_type,
      entity_id: p.entity_id.toLowerCase(),
      project_id: projectId,
      action: p.action as Action,
      actor,
      changes: p.changes as Record<string, unknown>,
      occurred_at: p.occurred_at,
    },
  };
}
