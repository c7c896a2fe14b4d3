/**
 * Builds the event a write leaves in the outbox (docs/architecture.md, step 2).
 */
import type { EventAction, Principal, StreamEvent } from '@reelbase/lib-platform';
import type { DataObject, RecordView } from './record.types.js';

/**
 * The user behind a write: null for guests, anonymous calls and services acting on their own
 * behalf; a service acting for a user (auth creating a user for an Admin) names that user.
 */
export function actorOf(principal: Principal | undefined): string | null {
  if (!principal || principal.authKind === 'guest') return null;
  return principal.userId || null;
}

/**
 * The project an event belongs to: the record's own id for a Project (so a project's
 * subscribers see its own changes), else its `project_id`.
 */
export function eventProjectId(r: Pick<RecordView, 'id' | 'entityType' | 'projectId'>): string | null {
  return r.entityType === 'Project' ? r.id : r.projectId;
}

export interface EventInput {
  eventId: string;
  record: RecordView;
  action: EventAction;
  principal: Principal | undefined;
  changes: DataObject;
  occurredAt: string;
}

/**
 * The outbox payload. A guest's write names the guest in `changes.guest_name` (docs/api-notes.md, Events),
 * except for deletes, whose changes are always `{}`.
 */
export function buildEventPayload(input: EventInput): StreamEvent {
  const { record, principal, action } = input;
  const changes: DataObject = { ...input.changes };
  if (principal?.authKind === 'guest' && action !== 'delete' && changes.guest_name === undefined) {
    changes.guest_name = principal.guestName ?? null;
  }
  return {
    event_id: input.eventId,
    entity_type: record.entityType,
    entity_id: record.id,
    project_id: eventProjectId(record),
    action,
    actor: actorOf(principal),
    changes,
    occurred_at: input.occurredAt,
  };
}
