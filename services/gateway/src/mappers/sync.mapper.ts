/**
 * The changes feed of sync (docs/api-notes.md, "Sync"): a page of the event log → records'
 * SyncService `Changes` request, and each event with what records answered about it → one
 * `SyncChange`.
 */
import type { eventsv1, syncv1 } from '@reelbase/proto';

/** What records' `Changes` answers about one event (its JSON). */
export interface ChangeInfo {
  event_id: number;
  is_record: boolean;
  record: unknown;
  external_ids: Record<string, string>;
  echo: boolean;
}

/** The events of a log page as the `Changes` request; with `source`, that source's own imports are marked as echoes. */
export function changesRequest(events: readonly eventsv1.Event[], source: string | undefined): syncv1.SyncServiceChangesRequest {
  return { events: events.map((e) => ({ eventId: e.id, entityId: e.entityId, createdAt: e.createdAt, entityType: e.entityType })), source };
}

/** The infos of a `Changes` answer, one per event of the request, in its order. */
export function changeInfos(answer: syncv1.SyncServiceChangesResponse): ChangeInfo[] {
  return (JSON.parse(answer.json) as { items: ChangeInfo[] }).items;
}

/** One change (`SyncChange`): the event, the record as it is now and its external ids. */
export function changeJson(event: eventsv1.Event, info: ChangeInfo) {
  return {
    event_id: event.id,
    action: event.action,
    entity_type: event.entityType,
    id: event.entityId,
    record: info.record,
    external_ids: info.external_ids,
  };
}
