/**
 * The message records publishes on the EVENTS stream for every committed write (subject
 * `events.<Type>.<action>`, see nats/subjects.ts) and the events service appends to the log.
 * This file is its only definition: records builds a {@link StreamEvent} and sends it with
 * {@link encodeStreamEvent}; events reads it with {@link parseStreamEvent}. A field renamed
 * here is a compile error on both sides; a message with a field missing is refused with a
 * reason naming the field, so a mismatch can never be dropped silently.
 */
import { isUuid } from './ids.js';

/** The actions of a write, as logged (a revive is logged as `create`). */
export const EVENT_ACTIONS = ['create', 'update', 'delete'] as const;
export type EventAction = (typeof EVENT_ACTIONS)[number];

/** One committed write as it travels from records to events. */
export interface StreamEvent {
  /** UUID v7 chosen by records; also the JetStream `Nats-Msg-Id`, so re-publishes are dropped. */
  event_id: string;
  entity_type: string;
  entity_id: string;
  /** The project the event belongs to (a Project's own id for a Project). */
  project_id: string | null;
  action: EventAction;
  /** Acting user id; null for a guest's write and for services acting on their own behalf. */
  actor: string | null;
  /** Flat: each changed column and data field with its new value (delete: `{}`). */
  changes: Record<string, unknown>;
  /** When the write committed (the record's new `updated_at`), ISO 8601 UTC. */
  occurred_at: string;
  /** Set when the event was too large for the stream and was sent without its changes. */
  changes_truncated?: true;
}

/** The fields every message must carry (`changes_truncated` is optional). */
export const STREAM_EVENT_FIELDS = [
  'event_id',
  'entity_type',
  'entity_id',
  'project_id',
  'action',
  'actor',
  'changes',
  'occurred_at',
] as const satisfies readonly (keyof StreamEvent)[];

/** A copy of `value` holding exactly `fields`, in that order (the order its JSON text lists them). */
export function fieldsInOrder<T extends object>(value: T, fields: readonly (keyof T & string)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = value[f];
  return out;
}

/** The message text of `event`: exactly the fields of {@link StreamEvent}, in their order. */
export function encodeStreamEvent(event: StreamEvent): string {
  const out = fieldsInOrder(event, STREAM_EVENT_FIELDS);
  if (event.changes_truncated) out.changes_truncated = true;
  return JSON.stringify(out);
}

export type StreamEventParse = { ok: true; event: StreamEvent } | { ok: false; reason: string };

// PostgreSQL's timestamptz accepts more than this, but anything else is not what records sends.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/;
const MAX_ENTITY_TYPE = 200;

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A UUID or null, lower-cased; undefined when neither. */
function optionalUuid(v: unknown): string | null | undefined {
  if (v === null) return null;
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

/**
 * Decodes and checks one message: every field present with a value the event log's columns
 * accept, or a reason naming the first field that is not. Ids come back lower-cased, so
 * duplicates compare equal; unknown fields are ignored (a newer sender may add some).
 */
export function parseStreamEvent(data: Uint8Array | string): StreamEventParse {
  const decoded = decodeMessage(data);
  return decoded.ok ? checkStreamEvent(decoded.raw, decoded.text) : decoded;
}

/** A message's text and its JSON, or why it has neither. */
function decodeMessage(data: Uint8Array | string): { ok: true; text: string; raw: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = typeof data === 'string' ? data : decoder.decode(data);
  } catch {
    return { ok: false, reason: 'payload is not UTF-8' };
  }
  try {
    return { ok: true, text, raw: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'payload is not JSON' };
  }
}

/** Checks one decoded event; `text` is the message it came from (for the cheap NUL test). */
function checkStreamEvent(raw: unknown, text: string): StreamEventParse {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'payload is not an object' };
  const p = raw as Record<string, unknown>;
  const missing = STREAM_EVENT_FIELDS.find((f) => !Object.hasOwn(p, f));
  if (missing) return { ok: false, reason: `${missing} is missing` };
  if (!isUuid(p.event_id)) return { ok: false, reason: 'event_id must be a UUID' };
  if (typeof p.entity_type !== 'string' || p.entity_type.length === 0 || p.entity_type.length > MAX_ENTITY_TYPE || hasNul(p.entity_type)) {
    return { ok: false, reason: 'entity_type must be a non-empty string' };
  }
  if (!isUuid(p.entity_id)) return { ok: false, reason: 'entity_id must be a UUID' };
  const projectId = optionalUuid(p.project_id);
  if (projectId === undefined) return { ok: false, reason: 'project_id must be a UUID or null' };
  if (!EVENT_ACTIONS.includes(p.action as EventAction)) return { ok: false, reason: 'action must be create, update or delete' };
  const actor = optionalUuid(p.actor);
  if (actor === undefined) return { ok: false, reason: 'actor must be a UUID or null' };
  if (typeof p.changes !== 'object' || p.changes === null || Array.isArray(p.changes)) {
    return { ok: false, reason: 'changes must be an object' };
  }
  // JSON.parse accepts "\u0000" but jsonb does not; such a row would fail its whole batch.
  if (text.includes('\\u0000') && deepHasNul(p.changes)) return { ok: false, reason: 'changes contain a NUL character' };
  if (typeof p.occurred_at !== 'string' || !ISO_TIMESTAMP.test(p.occurred_at) || Number.isNaN(Date.parse(p.occurred_at))) {
    return { ok: false, reason: 'occurred_at must be an ISO 8601 timestamp' };
  }
  const event: StreamEvent = {
    event_id: p.event_id.toLowerCase(),
    entity_type: p.entity_type,
    entity_id: p.entity_id.toLowerCase(),
    project_id: projectId,
    action: p.action as EventAction,
    actor,
    changes: p.changes as Record<string, unknown>,
    occurred_at: p.occurred_at,
  };
  if (p.changes_truncated === true) event.changes_truncated = true;
  return { ok: true, event };
}

/**
 * The message of a batch's events (POST /batch): `{"batch": [event, ...]}` on the subject
 * {@link NatsNames.eventBatchSubject}, one message so the log appends the events consecutively
 * in one transaction (docs/architecture.md, "Batches").
 */
export function encodeStreamBatch(events: readonly StreamEvent[]): string {
  return `{"batch":[${events.map(encodeStreamEvent).join(',')}]}`;
}

export type StreamMessageParse = { ok: true; events: StreamEvent[] } | { ok: false; reason: string };

/** Decodes a message of the EVENTS stream: one event, or a batch of them (all valid, or the reason of the first that is not). */
export function parseStreamMessage(data: Uint8Array | string): StreamMessageParse {
  const decoded = decodeMessage(data);
  if (!decoded.ok) return decoded;
  const { text, raw } = decoded;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && Object.hasOwn(raw, 'batch')) {
    const batch = (raw as { batch: unknown }).batch;
    if (!Array.isArray(batch) || batch.length === 0) return { ok: false, reason: 'batch must be a non-empty array' };
    const events: StreamEvent[] = [];
    for (const [i, item] of batch.entries()) {
      const r = checkStreamEvent(item, text);
      if (!r.ok) return { ok: false, reason: `batch[${i}]: ${r.reason}` };
      events.push(r.event);
    }
    return { ok: true, events };
  }
  const r = checkStreamEvent(raw, text);
  return r.ok ? { ok: true, events: [r.event] } : r;
}
