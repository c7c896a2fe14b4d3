/**
 * The event as clients see it (docs/api-notes.md, Events; the `Event` schema of the OpenAPI
 * document): published live on `live.events` by the events
 * service, returned by GET /events and sent on the WebSocket by the gateway. The events
 * service sends it with {@link encodeContractEvent}; the gateway reads the live subject with
 * {@link parseContractEvent}.
 */
import type { eventsv1 } from '@reelbase/proto';
import { EVENT_ACTIONS, fieldsInOrder, type EventAction } from './stream-event.js';

export interface ContractEvent {
  /** Global, gapless, increasing. */
  id: number;
  entity_type: string;
  entity_id: string;
  project_id: string | null;
  /** create, update or delete. */
  action: string;
  /** Acting user id; null for a guest's write. */
  actor: string | null;
  changes: Record<string, unknown>;
  created_at: string;
}

/** Every field, in the order clients see them. */
export const CONTRACT_EVENT_FIELDS = [
  'id',
  'entity_type',
  'entity_id',
  'project_id',
  'action',
  'actor',
  'changes',
  'created_at',
] as const satisfies readonly (keyof ContractEvent)[];

/** The JSON text of `event`: exactly its fields, in {@link CONTRACT_EVENT_FIELDS} order. */
export function encodeContractEvent(event: ContractEvent): string {
  return JSON.stringify(fieldsInOrder(event, CONTRACT_EVENT_FIELDS));
}

/**
 * A log row as events' gRPC returns it (`ListEvents`) in its client form: `changes_json` parsed to
 * `changes` (an object; anything else, which the events service never writes, reads as `{}`).
 */
export function contractEventFromProto(e: eventsv1.Event): ContractEvent {
  let changes: Record<string, unknown> = {};
  try {
    const v: unknown = e.changesJson ? JSON.parse(e.changesJson) : {};
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) changes = v as Record<string, unknown>;
  } catch {
    changes = {};
  }
  return {
    id: e.id,
    entity_type: e.entityType,
    entity_id: e.entityId,
    project_id: e.projectId ?? null,
    action: e.action,
    actor: e.actor ?? null,
    changes,
    created_at: e.createdAt,
  };
}

export type ContractEventParse = { ok: true; event: ContractEvent } | { ok: false; reason: string };

const decoder = new TextDecoder('utf-8', { fatal: true });
const nullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** Decodes and checks one live message, or gives a reason naming the first bad field. */
export function parseContractEvent(data: Uint8Array | string): ContractEventParse {
  let raw: unknown;
  try {
    raw = JSON.parse(typeof data === 'string' ? data : decoder.decode(data));
  } catch {
    return { ok: false, reason: 'payload is not UTF-8 JSON' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, reason: 'payload is not an object' };
  const p = raw as Record<string, unknown>;
  const missing = CONTRACT_EVENT_FIELDS.find((f) => !Object.hasOwn(p, f));
  if (missing) return { ok: false, reason: `${missing} is missing` };
  if (typeof p.id !== 'number' || !Number.isSafeInteger(p.id) || p.id < 1) return { ok: false, reason: 'id must be a positive integer' };
  if (typeof p.entity_type !== 'string' || p.entity_type === '') return { ok: false, reason: 'entity_type must be a non-empty string' };
  if (typeof p.entity_id !== 'string' || p.entity_id === '') return { ok: false, reason: 'entity_id must be a non-empty string' };
  if (!nullableString(p.project_id)) return { ok: false, reason: 'project_id must be a string or null' };
  if (!EVENT_ACTIONS.includes(p.action as EventAction)) return { ok: false, reason: 'action must be create, update or delete' };
  if (!nullableString(p.actor)) return { ok: false, reason: 'actor must be a string or null' };
  if (typeof p.changes !== 'object' || p.changes === null || Array.isArray(p.changes)) return { ok: false, reason: 'changes must be an object' };
  if (typeof p.created_at !== 'string' || p.created_at === '') return { ok: false, reason: 'created_at must be a timestamp' };
  return {
    ok: true,
    event: {
      id: p.id,
      entity_type: p.entity_type,
      entity_id: p.entity_id,
      project_id: p.project_id,
      action: p.action as string,
      actor: p.actor,
      changes: p.changes as Record<string, unknown>,
      created_at: p.created_at,
    },
  };
}
