/**
 * The event log over HTTP (polling and gapless replay) and the documentation of the
 * WebSocket stream, whose upgrade the hub handles.
 */
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { eventFromProto } from '../mappers/event.mapper.js';
import { EventList, EventsQuery, WsQuery } from '../schemas/event.schema.js';
import type { RouteDeps } from './route.deps.js';

export function eventRoutes({ peers }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'Recent events, newest first; with `after`, the events after that id, oldest first.',
      tags: ['events'],
      auth: 'bearer',
      query: EventsQuery,
      responses: { 200: { description: 'Events.', schema: EventList } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        const res = await peers.events.listEvents(
          { limit: query.limit, after: query.after, entityType: query.entity_type, projectId: query.project_id },
          ctx,
        );
        return { items: res.items.map(eventFromProto) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/events/ws',
      operationId: 'eventsWebSocket',
      summary: 'WebSocket: every event as one JSON text message, in id order.',
      description:
        'Upgrade with `?token=` (a login token or API key) and optionally `since=<id>` to replay every event after it ' +
        'first, then continue live with no gap and no duplicate. Ping frames every 30 s; a socket that misses a pong is ' +
        'dropped. Close codes: 1008 missing, invalid or revoked token (the handshake completes, nothing is sent); 1013 ' +
        'client too slow or a dependency is down; 1001 server shutting down. A plain GET without an upgrade gets 426.',
      tags: ['events'],
      auth: 'public',
      rateLimited: false,
      docQuery: WsQuery,
      responses: {
        101: { description: 'Switching protocols.' },
        426: { description: 'Not a WebSocket upgrade.' },
      },
      handler: () => Reply.json({ detail: 'this route needs a WebSocket upgrade', code: 'upgrade_required' }, 426, { upgrade: 'websocket' }),
    }),
  ];
}
