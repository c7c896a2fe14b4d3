/**
 * gRPC `reelbase.events.v1.EventsService`: transport ↔ domain for reads of the log.
 */
import type { eventsv1 } from '@reelbase/proto';
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import { parseListQuery } from '../domain/list.query.js';
import type { EventLogReader } from '../domain/ports.js';

/** Full proto name, used for registration and health. */
export const EVENTS_SERVICE_NAME = 'reelbase.events.v1.EventsService';

export interface EventsHandlerDeps {
  log: EventLogReader;
}

/** The handlers registered with GrpcServer under {@link EVENTS_SERVICE_NAME}. */
export function eventsHandlers(deps: EventsHandlerDeps): UnaryHandlers<eventsv1.EventsServiceServer> {
  return {
    /**
     * Newest first without `after` (below `before` when given); with it, the events after that
     * id, oldest first. A page stops early at the byte budget and says so with `truncated`.
     */
    async listEvents(req: eventsv1.ListEventsRequest, _ctx: CallContext): Promise<eventsv1.ListEventsResponse> {
      const query = parseListQuery({
        limit: req.limit,
        ...(req.after !== undefined ? { after: req.after } : {}),
        ...(req.before !== undefined ? { before: req.before } : {}),
        ...(req.entityType !== undefined ? { entityType: req.entityType } : {}),
        ...(req.projectId !== undefined ? { projectId: req.projectId } : {}),
        hiddenProjectIds: req.hiddenProjectIds,
      });
      const page = await deps.log.list(query);
      return {
        lastId: page.lastId,
        truncated: page.truncated,
        items: page.items.map((e) => ({
          id: e.id,
          entityType: e.entityType,
          entityId: e.entityId,
          ...(e.projectId !== null ? { projectId: e.projectId } : {}),
          action: e.action,
          ...(e.actor !== null ? { actor: e.actor } : {}),
          changesJson: e.changesJson,
          createdAt: e.createdAt,
        })),
      };
    },
  };
}
