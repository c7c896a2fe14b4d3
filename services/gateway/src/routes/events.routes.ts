/**
 * The event log over HTTP (polling and gapless replay) and the documentation of the
 * WebSocket stream, whose upgrade the hub handles.
 */
import { AppError, contractEventFromProto } from '@reelbase/lib-platform';
import type { AnyRoute } from '../http/route.js';
import { Reply, defineRoute } from '../http/route.js';
import { EVENTS_CURSOR, EventList, EventsQuery, WsQuery } from '../schemas/event.schema.js';
import type { RouteDeps } from './route.deps.js';

export function eventRoutes({ peers, access }: RouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/events',
      operationId: 'listEvents',
      summary: 'Recent events, newest first; with `after`, the events after that id, oldest first.',
      description:
        "A page holds at most `limit` events and at most about 4 MiB of them (the events service's " +
        '`EVENTS_PAGE_MAX_BYTES`; one event larger than that still comes alone). A page cut short by that budget ' +
        'carries `next_cursor`; `GET /events?cursor=<next_cursor>` with the same filters continues it in the same ' +
        'order (newest first pages go on to older events, `after` pages to newer ones). A replay with `after` can ' +
        'also simply go on from the last id it got. The events of a restricted project the caller may not read are ' +
        'left out, as if they were not in the log (ids then skip them; `project_id` of such a project answers no events); ' +
        'a non-Admin gets 503 while the gateway could not yet read who may read restricted projects ' +
        '(docs/api-notes.md, "Restricted projects").',
      tags: ['events'],
      auth: 'bearer',
      query: EventsQuery,
      responses: { 200: { description: 'Events.', schema: EventList } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        const cursor = query.cursor ? EVENTS_CURSOR.exec(query.cursor) : null;
        if (cursor && query.after !== undefined) {
          throw AppError.invalid([{ loc: ['query', 'cursor'], msg: 'Give either after or cursor, not both', type: 'value_error' }]);
        }
        const ascending = cursor ? cursor[1] === 'after' : query.after !== undefined;
        const from = cursor ? Number(cursor[2]) : query.after;
        const res = await peers.events.listEvents(
          {
            limit: query.limit,
            ...(ascending ? { after: from } : from !== undefined ? { before: from } : {}),
            entityType: query.entity_type,
            projectId: query.project_id,
            hiddenProjectIds: [...access.hiddenFor(ctx.principal)],
          },
          ctx,
        );
        const last = res.items.at(-1);
        const next_cursor = res.truncated && last ? `${ascending ? 'after' : 'before'}:${last.id}` : null;
        return { items: res.items.map(contractEventFromProto), next_cursor };
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
        'dropped. Close codes: 1008 missing, invalid or revoked token, or an agent API key (the handshake completes, nothing is sent); 1013 ' +
        'client too slow or a dependency is down; 1001 server shutting down. A plain GET without an upgrade gets 426. ' +
        'The events of a restricted project the socket may not read are never sent, live or replayed; a member removed ' +
        '(or a project restricted) stops receiving its events within 2 s without reconnecting, and a member added starts ' +
        'receiving them, while other projects keep flowing. A non-Admin socket is closed with 1013 while the gateway ' +
        'cannot tell who may read restricted projects (docs/api-notes.md, "Restricted projects").',
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
