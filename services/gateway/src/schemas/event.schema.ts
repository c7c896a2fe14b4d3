/**
 * Events routes' schemas (docs/api-notes.md, Events).
 */
import { z } from 'zod';
import { JsonObject, Uuid } from './common.schema.js';

export const EventOut = z
  .object({
    id: z.number().int().describe('Global, gapless, increasing.'),
    entity_type: z.string(),
    entity_id: Uuid,
    project_id: Uuid.nullable(),
    action: z.enum(['create', 'update', 'delete']),
    actor: Uuid.nullable().describe("The acting user's id; null for a guest's write."),
    changes: JsonObject.describe('Flat: each changed column and data field with its new value.'),
    created_at: z.string(),
  })
  .meta({ id: 'Event' });

/** `after:<id>` or `before:<id>`: where a page cut short by its byte budget goes on. */
export const EVENTS_CURSOR = /^(after|before):([1-9][0-9]{0,14})$/;

export const EventList = z
  .object({
    items: z.array(EventOut),
    next_cursor: z
      .string()
      .nullable()
      .describe(
        'Set when the page stopped before `limit` events because it reached the byte budget (4 MiB by default; ' +
          'a page always holds at least one event): send it back as `cursor`, with the same filters, for the ' +
          'events that follow in the same order. Null otherwise.',
      ),
  })
  .meta({ id: 'EventList' });

/** An entity type code, or the kind of a schema change (`Schema.Status`, `Schema.Field`, ...). */
const EventEntityType = z
  .string()
  .regex(/^(Schema\.)?[A-Z][A-Za-z0-9]{0,63}$/)
  .describe('An entity type (`Shot`) or a schema change kind (`Schema.Status`).');

export const EventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1..1000.'),
  after: z.coerce.number().int().min(0).optional().describe('Events after this id, oldest first (gapless replay).'),
  cursor: z.string().regex(EVENTS_CURSOR).optional().describe("A page's `next_cursor`: continues that page in its order (not together with `after`)."),
  entity_type: EventEntityType.optional(),
  project_id: Uuid.optional(),
});

/** Query of the WebSocket upgrade (validated by the hub, documented on the route). */
export const WsQuery = z.object({
  token: z.string().min(1).describe('A login token or an svc_ API key.'),
  since: z.coerce.number().int().min(0).optional().describe('Replay every event after this id, then continue live.'),
});
