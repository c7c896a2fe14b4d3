/**
 * Event log rows in their client form (contract 4), from gRPC and from the live feed.
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

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * A live row from NATS → client form. Accepts `changes` as an object or `changes_json` as
 * text; throws when the row has no usable id.
 */
export function eventFromLive(raw: unknown): ContractEvent {
  const o = raw as Record<string, unknown>;
  const id = typeof o?.id === 'string' ? Number(o.id) : o?.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw new Error('live event without a valid id');
  const changes =
    o.changes !== null && typeof o.changes === 'object' && !Array.isArray(o.changes)
      ? (o.changes as Record<string, unknown>)
      : parseChanges(str(o.changes_json) ?? undefined);
  return {
    id,
    entity_type: str(o.entity_type) ?? '',
    entity_id: str(o.entity_id) ?? '',
    project_id: str(o.project_id),
    action: str(o.action) ?? '',
    actor: str(o.actor),
    changes,
    created_at: str(o.created_at) ?? '',
  };
}
