/**
 * Events routes' schemas (contract 4).
 */
import { z } from 'zod';
import { EntityTypeCode, JsonObject, Uuid } from './common.schema.js';

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

export const EventList = z.object({ items: z.array(EventOut) }).meta({ id: 'EventList' });

export const EventsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1..1000.'),
  after: z.coerce.number().int().min(0).optional().describe('Events after this id, oldest first (gapless replay).'),
  entity_type: EntityTypeCode.optional(),
  project_id: Uuid.optional(),
});

/** Query of the WebSocket upgrade (validated by the hub, documented on the route). */
export const WsQuery = z.object({
  token: z.string().min(1).describe('A login token or an svc_ API key.'),
  since: z.coerce.number().int().min(0).optional().describe('Replay every event after this id, then continue live.'),
});
