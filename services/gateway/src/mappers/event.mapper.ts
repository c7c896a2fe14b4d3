/**
 * Event log rows from gRPC in their client form (docs/api-notes.md, Events); the live feed is read with
 * lib-platform's parseContractEvent.
 */
import type { ContractEvent } from '@reelbase/lib-platform';
import type { eventsv1 } from '@reelbase/proto';

function parseChanges(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  const v: unknown = JSON.parse(text);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A gRPC log row → client form (`changes_json` parsed to `changes`). */
export function eventFromProto(e: eventsv1.Event): ContractEvent {
  return {
    id: e.id,
    entity_type: e.entityType,
    entity_id: e.entityId,
    project_id: e.projectId ?? null,
    action: e.action,
    actor: e.actor ?? null,
    changes: parseChanges(e.changesJson),
    created_at: e.createdAt,
  };
}
