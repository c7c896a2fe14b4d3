/**
 * Notifications and webhooks (docs/api-notes.md, "Notifications" and "Webhooks"), served by the
 * notifier over gRPC. Any signed-in user reads and marks their own notifications; webhooks are
 * Admin only (403 before the request is validated; the notifier checks the role again).
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { AnyRoute } from '../http/route.js';
import { defineRoute } from '../http/route.js';
import { createWebhookRequest, deliveryJson, notificationJson, updateWebhookRequest, webhookJson } from '../mappers/notifier.mapper.js';
import {
  DeliveriesQuery,
  DeliveryList,
  DeliveryOut,
  DeliveryPath,
  IdPath,
  NotificationList,
  NotificationOut,
  NotificationsQuery,
  ReadAllOut,
  WebhookCreate,
  WebhookDeleted,
  WebhookList,
  WebhookOut,
  WebhookPatch,
} from '../schemas/notifier.schema.js';
import type { RouteDeps } from './route.deps.js';
import { ADMIN } from './route.roles.js';

/** Webhooks: Admins only, decided before the body is validated. */
const WEBHOOK_ADMIN = { roles: ADMIN, to: 'manage webhooks' };

const WEBHOOK_TAGS = ['webhooks'];
const NOTIFICATION_TAGS = ['notifications'];

export function notifierRoutes({ peers, access }: RouteDeps): AnyRoute[] {
  const notifier = peers.notifier;
  /** The restricted projects the caller may not read: their notifications do not exist for them. */
  const hidden = (ctx: CallContext) => [...access.hiddenFor(ctx.principal)];
  return [
    // --- notifications -----------------------------------------------------------------------
    defineRoute({
      method: 'get',
      path: '/notifications',
      operationId: 'listNotifications',
      summary: "The caller's own notifications, newest first.",
      description:
        'A user is notified when a Task write adds them to its assignees (`assigned`), when a Note links a Task they ' +
        'are assigned to (`note`), and when a Note replies to one of theirs (`reply`); never for their own writes. ' +
        'Notifications are made from the event stream, so one appears shortly after the write (its `event_id` is the ' +
        '`GET /events` id). Paged with `next_cursor`. Notifications about records of a restricted project the caller ' +
        'may not read are left out (and answer 404 to `POST /notifications/{id}/read`; read-all leaves them as they are) ' +
        'for as long as the caller may not read it (docs/api-notes.md, "Restricted projects").',
      tags: NOTIFICATION_TAGS,
      auth: 'bearer',
      query: NotificationsQuery,
      responses: { 200: { description: 'A page of notifications.', schema: NotificationList } },
      errors: [503],
      handler: async ({ query, ctx }) => {
        const res = await notifier.listNotifications(
          { unreadOnly: query.unread_only ?? false, limit: query.limit, cursor: query.cursor, hiddenProjectIds: hidden(ctx) },
          ctx,
        );
        return { items: res.items.map(notificationJson), next_cursor: res.nextCursor ?? null };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/notifications/read-all',
      operationId: 'readAllNotifications',
      summary: 'Marks every unread notification of the caller read.',
      tags: NOTIFICATION_TAGS,
      auth: 'bearer',
      responses: { 200: { description: 'How many were marked.', schema: ReadAllOut } },
      errors: [503],
      handler: async ({ ctx }) => ({ count: (await notifier.markAllNotificationsRead({ hiddenProjectIds: hidden(ctx) }, ctx)).count }),
    }),
    defineRoute({
      method: 'post',
      path: '/notifications/{id}/read',
      operationId: 'readNotification',
      summary: 'Marks one of the caller’s notifications read.',
      description:
        'Marking it again keeps the first `read_at`. Another user’s notification is 404, like one that does not exist, and so ' +
        'is one about a restricted project the caller may not read.',
      tags: NOTIFICATION_TAGS,
      auth: 'bearer',
      params: IdPath,
      responses: { 200: { description: 'The notification.', schema: NotificationOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) =>
        notificationJson((await notifier.markNotificationRead({ id: params.id, hiddenProjectIds: hidden(ctx) }, ctx)).notification),
    }),

    // --- webhooks ----------------------------------------------------------------------------
    defineRoute({
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhook',
      summary: 'Create an outbound webhook or chat target (Admin).',
      description:
        'Every event whose entity type and action pass the filters is delivered at least once, in event order per ' +
        'webhook (docs/api-notes.md, "Webhooks"). The host is resolved at once: a URL whose address is loopback, private, ' +
        'link-local, unique-local, carrier-grade NAT, multicast or unspecified is 422 on `url` (checked again at each ' +
        'delivery against the address connected to).',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      body: WebhookCreate,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'The webhook (without its secret).', schema: WebhookOut } },
      errors: [503],
      handler: async ({ body, ctx }) => webhookJson((await notifier.createWebhook(createWebhookRequest(body), ctx)).webhook),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhooks',
      summary: 'Every webhook (Admin).',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'The webhooks, oldest first.', schema: WebhookList } },
      errors: [503],
      handler: async ({ ctx }) => ({ items: (await notifier.listWebhooks({}, ctx)).items.map(webhookJson) }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}',
      operationId: 'getWebhook',
      summary: 'One webhook (Admin).',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      params: IdPath,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'The webhook.', schema: WebhookOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => webhookJson((await notifier.getWebhook({ id: params.id }, ctx)).webhook),
    }),
    defineRoute({
      method: 'patch',
      path: '/webhooks/{id}',
      operationId: 'updateWebhook',
      summary: 'Change a webhook (Admin).',
      description: 'Absent keys are kept; `"secret": null` removes the secret; `"active": true` also re-enables a webhook the notifier switched off.',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      params: IdPath,
      body: WebhookPatch,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'The webhook.', schema: WebhookOut } },
      errors: [404, 503],
      handler: async ({ params, body, ctx }) => webhookJson((await notifier.updateWebhook(updateWebhookRequest(params.id, body), ctx)).webhook),
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook and its deliveries (Admin).',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      params: IdPath,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'Deleted.', schema: WebhookDeleted } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => {
        await notifier.deleteWebhook({ id: params.id }, ctx);
        return { id: params.id, deleted: true };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: "A webhook's deliveries, newest first (Admin).",
      description: 'Each with its state, attempts, the last status code, latency, error and the start of the answer body.',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      params: IdPath,
      query: DeliveriesQuery,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'A page of deliveries.', schema: DeliveryList } },
      errors: [404, 503],
      handler: async ({ params, query, ctx }) => {
        const res = await notifier.listDeliveries({ webhookId: params.id, status: query.status, limit: query.limit, cursor: query.cursor }, ctx);
        return { items: res.items.map(deliveryJson), next_cursor: res.nextCursor ?? null };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/webhooks/{id}/deliveries/{delivery_id}/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again now (Admin).',
      description:
        'The delivery goes back in line at once with a fresh retry window (a dead one, or a delivered one a receiver asks for again); ' +
        'a webhook the notifier switched off is switched on again. Order per webhook still holds.',
      tags: WEBHOOK_TAGS,
      auth: 'bearer',
      params: DeliveryPath,
      allow: WEBHOOK_ADMIN,
      responses: { 200: { description: 'The delivery, pending again.', schema: DeliveryOut } },
      errors: [404, 503],
      handler: async ({ params, ctx }) => deliveryJson((await notifier.retryDelivery({ webhookId: params.id, deliveryId: params.delivery_id }, ctx)).delivery),
    }),
  ];
}
