/**
 * Schemas of the notification and webhook routes (docs/api-notes.md, "Notifications" and
 * "Webhooks"): queries, bodies and the JSON the notifier's answers become.
 */
import { MAX_OUTBOUND_URL_CHARS, notifierPolicy as P } from '@reelbase/lib-platform';
import { z } from 'zod';
import { Uuid } from './common.schema.js';

/** Most items one page of notifications or deliveries holds. */
export const NOTIFIER_PAGE_MAX = P.MAX_PAGE;

/** `true` or `false` in a query string. */
const QueryBool = z.enum(['true', 'false']).transform((v) => v === 'true');

const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(NOTIFIER_PAGE_MAX)
  .default(P.DEFAULT_PAGE)
  .describe(`Items per page, 1..${NOTIFIER_PAGE_MAX} (default ${P.DEFAULT_PAGE}).`);
const Cursor = z.string().min(1).max(512).optional().describe('The `next_cursor` of the previous page.');

export const IdPath = z.strictObject({ id: Uuid });
export const DeliveryPath = z.strictObject({ id: Uuid, delivery_id: Uuid });

export const NotificationsQuery = z.strictObject({
  unread_only: QueryBool.optional().describe('`true`: only notifications not yet read.'),
  limit: Limit,
  cursor: Cursor,
});

export const NotificationOut = z
  .object({
    id: Uuid,
    kind: z
      .string()
      .describe(
        '`assigned` (a Task now lists you among its assignees), `note` (a Note links a Task you are assigned to), `reply` ' +
          '(a Note replies to yours); Admins also get `webhook_disabled` (a webhook failed for its whole retry window and was switched off).',
      ),
    record: z.object({ type: z.string(), id: Uuid }).describe('The record it is about: the Task, the Note, or the webhook (`{"type": "Webhook"}`).'),
    event_id: z.number().int().nullable().describe('The `GET /events` id of the write that caused it; null for `webhook_disabled`.'),
    actor: Uuid.nullable().describe('Who wrote it; null for a guest on a share link or the notifier itself.'),
    created_at: z.string(),
    read_at: z.string().nullable(),
  })
  .meta({ id: 'Notification', description: 'One notification of the caller.' });

export const NotificationList = z
  .object({
    items: z.array(NotificationOut).describe('Newest first.'),
    next_cursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
  })
  .meta({ id: 'NotificationList' });

export const ReadAllOut = z
  .object({ count: z.number().int().describe('How many unread notifications were marked read.') })
  .meta({ id: 'NotificationsReadAll' });

const WEBHOOK_KINDS = P.WEBHOOK_KINDS;
const ACTIONS = ['create', 'update', 'delete'] as const;

const WebhookUrl = z
  .url({ protocol: /^https?$/ })
  .max(MAX_OUTBOUND_URL_CHARS)
  .refine((u) => {
    const parsed = URL.parse(u);
    return !parsed || (parsed.username === '' && parsed.password === '');
  }, 'The URL must not carry a user name or password')
  .describe('An http or https URL without credentials. A host on loopback, private, link-local or other non-public addresses is refused (422).');

const Secret = z
  .string()
  .min(P.MIN_SECRET_LENGTH)
  .max(P.MAX_SECRET_LENGTH)
  .describe(`Signs every delivery: \`X-Signature: sha256=<hex HMAC-SHA256 of the raw body>\`. At least ${P.MIN_SECRET_LENGTH} characters; never returned.`);

/** An entity type code, or the kind of a schema change event (`Schema.Status`), as events name them. */
const EventEntityType = z.string().regex(/^(Schema\.)?[A-Z][A-Za-z0-9]{0,63}$/);
const EntityTypes = z
  .array(EventEntityType)
  .max(P.MAX_FILTERS)
  .describe('Only events of these entity types (`Shot`, or a schema change kind such as `Schema.Status`); empty or absent: every type.');
const Actions = z.array(z.enum(ACTIONS)).max(3).describe('Only these actions; empty or absent: every action.');

export const WebhookCreate = z
  .strictObject({
    url: WebhookUrl,
    kind: z.enum(WEBHOOK_KINDS).describe('`webhook`: the event as JSON; `chat`: a Slack-compatible `{"text"}` message.'),
    secret: Secret.optional(),
    entity_types: EntityTypes.optional(),
    actions: Actions.optional(),
    active: z.boolean().optional().describe('Defaults to true.'),
  })
  .meta({ id: 'WebhookCreate', description: 'Body of POST /webhooks.' });

export const WebhookPatch = z
  .strictObject({
    url: WebhookUrl.optional(),
    kind: z.enum(WEBHOOK_KINDS).optional(),
    secret: Secret.nullable().optional().describe('A new secret; null removes it (deliveries are then unsigned).'),
    entity_types: EntityTypes.optional(),
    actions: Actions.optional(),
    active: z.boolean().optional().describe('true also re-enables a webhook the notifier switched off (`disabled_at`).'),
  })
  .meta({ id: 'WebhookPatch', description: 'Body of PATCH /webhooks/{id}: every key optional, an absent key is kept.' });

export const WebhookOut = z
  .object({
    id: Uuid,
    url: z.string(),
    kind: z.enum(WEBHOOK_KINDS),
    has_secret: z.boolean().describe('The secret itself is never returned.'),
    entity_types: z.array(z.string()),
    actions: z.array(z.string()),
    active: z.boolean(),
    disabled_at: z.string().nullable().describe('When the notifier switched it off after failing for its whole retry window; null otherwise.'),
    created_by: Uuid.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Webhook', description: 'An outbound webhook or chat target.' });

export const WebhookList = z.object({ items: z.array(WebhookOut) }).meta({ id: 'WebhookList' });

export const WebhookDeleted = z
  .object({ id: Uuid, deleted: z.literal(true) })
  .meta({ id: 'WebhookDeleted', description: 'The webhook and its deliveries are gone.' });

const DELIVERY_STATUSES = P.DELIVERY_STATUSES;

export const DeliveriesQuery = z.strictObject({
  status: z.enum(DELIVERY_STATUSES).optional().describe('Only deliveries in this state.'),
  limit: Limit,
  cursor: Cursor,
});

export const DeliveryOut = z
  .object({
    id: Uuid,
    webhook_id: Uuid,
    event_id: z.number().int().describe('The `GET /events` id; also the `X-Event-Id` header and the body `id`.'),
    entity_type: z.string(),
    entity_id: Uuid,
    action: z.string(),
    status: z
      .enum(DELIVERY_STATUSES)
      .describe('`pending` (waiting or being retried), `delivered` (a 2xx answer) or `dead` (retry window over; retry it by hand).'),
    attempts: z.number().int(),
    status_code: z.number().int().nullable().describe('HTTP status of the last attempt; null when no answer came.'),
    latency_ms: z.number().int().nullable().describe('Duration of the last attempt.'),
    response: z.string().nullable().describe('The start of the last answer body (at most 2 KiB).'),
    error: z.string().nullable().describe('Why the last attempt failed (timeout, connection refused, blocked address, HTTP status).'),
    next_attempt_at: z.string().nullable(),
    last_attempt_at: z.string().nullable(),
    delivered_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'Delivery', description: 'One event sent (or to be sent) to one webhook, and what its last attempt gave.' });

export const DeliveryList = z
  .object({
    items: z.array(DeliveryOut).describe('Newest first.'),
    next_cursor: z.string().nullable().describe('Pass it as `cursor` for the next page; null on the last page.'),
  })
  .meta({ id: 'DeliveryList' });
