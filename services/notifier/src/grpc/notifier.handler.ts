/**
 * gRPC `reelbase.notifier.v1.NotifierService`: transport ↔ domain for notifications, webhooks
 * and deliveries (domain/notifier.api.ts checks roles and input).
 */
import type { notifierv1 } from '@reelbase/proto';
import type { CallContext, UnaryHandlers } from '@reelbase/lib-platform';
import type { NotifierApi } from '../domain/notifier.api.js';
import type { DeliveryView, NotificationView, WebhookView } from '../domain/ports.js';

/** Full proto name, used for registration and health. */
export const NOTIFIER_SERVICE_NAME = 'reelbase.notifier.v1.NotifierService';

export interface NotifierHandlerDeps {
  api: NotifierApi;
}

function notificationOut(n: NotificationView): notifierv1.Notification {
  return {
    id: n.id,
    kind: n.kind,
    recordType: n.recordType,
    recordId: n.recordId,
    eventId: n.eventId ?? 0,
    ...(n.actor !== null ? { actor: n.actor } : {}),
    createdAt: n.createdAt,
    ...(n.readAt !== null ? { readAt: n.readAt } : {}),
  };
}

function webhookOut(w: WebhookView): notifierv1.Webhook {
  return {
    id: w.id,
    url: w.url,
    kind: w.kind,
    hasSecret: w.hasSecret,
    entityTypes: w.entityTypes,
    actions: w.actions,
    active: w.active,
    ...(w.disabledAt !== null ? { disabledAt: w.disabledAt } : {}),
    ...(w.createdBy !== null ? { createdBy: w.createdBy } : {}),
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

function deliveryOut(d: DeliveryView): notifierv1.Delivery {
  const opt = <K extends string, V>(k: K, v: V | null) => (v === null ? {} : ({ [k]: v } as Record<K, V>));
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    entityType: d.entityType,
    entityId: d.entityId,
    action: d.action,
    status: d.status,
    attempts: d.attempts,
    ...opt('statusCode', d.statusCode),
    ...opt('latencyMs', d.latencyMs),
    ...opt('response', d.response),
    ...opt('error', d.error),
    ...opt('nextAttemptAt', d.nextAttemptAt),
    ...opt('lastAttemptAt', d.lastAttemptAt),
    ...opt('deliveredAt', d.deliveredAt),
    createdAt: d.createdAt,
  };
}

/** The handlers registered with GrpcServer under {@link NOTIFIER_SERVICE_NAME}. */
export function notifierHandlers(deps: NotifierHandlerDeps): UnaryHandlers<notifierv1.NotifierServiceServer> {
  return {
    async listNotifications(req: notifierv1.ListNotificationsRequest, ctx: CallContext): Promise<notifierv1.ListNotificationsResponse> {
      const page = await deps.api.listNotifications(
        { unreadOnly: req.unreadOnly, limit: req.limit, cursor: req.cursor, hiddenProjectIds: req.hiddenProjectIds },
        ctx,
      );
      return { items: page.items.map(notificationOut), ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}) };
    },

    async markNotificationRead(req: notifierv1.MarkNotificationReadRequest, ctx: CallContext): Promise<notifierv1.MarkNotificationReadResponse> {
      return { notification: notificationOut(await deps.api.markRead(req.id, ctx, req.hiddenProjectIds)) };
    },

    async markAllNotificationsRead(req: notifierv1.MarkAllNotificationsReadRequest, ctx: CallContext): Promise<notifierv1.MarkAllNotificationsReadResponse> {
      return { count: await deps.api.markAllRead(ctx, req.hiddenProjectIds) };
    },

    async createWebhook(req: notifierv1.CreateWebhookRequest, ctx: CallContext): Promise<notifierv1.CreateWebhookResponse> {
      const w = await deps.api.createWebhook(
        { url: req.url, kind: req.kind, secret: req.secret, entityTypes: req.entityTypes, actions: req.actions, active: req.active },
        ctx,
      );
      return { webhook: webhookOut(w) };
    },

    async listWebhooks(_req: notifierv1.ListWebhooksRequest, ctx: CallContext): Promise<notifierv1.ListWebhooksResponse> {
      return { items: (await deps.api.listWebhooks(ctx)).map(webhookOut) };
    },

    async getWebhook(req: notifierv1.GetWebhookRequest, ctx: CallContext): Promise<notifierv1.GetWebhookResponse> {
      return { webhook: webhookOut(await deps.api.getWebhook(req.id, ctx)) };
    },

    async updateWebhook(req: notifierv1.UpdateWebhookRequest, ctx: CallContext): Promise<notifierv1.UpdateWebhookResponse> {
      const w = await deps.api.updateWebhook(
        {
          id: req.id,
          url: req.url,
          kind: req.kind,
          secret: req.secret,
          clearSecret: req.clearSecret,
          entityTypes: req.entityTypes?.values,
          actions: req.actions?.values,
          active: req.active,
        },
        ctx,
      );
      return { webhook: webhookOut(w) };
    },

    async deleteWebhook(req: notifierv1.DeleteWebhookRequest, ctx: CallContext): Promise<notifierv1.DeleteWebhookResponse> {
      await deps.api.deleteWebhook(req.id, ctx);
      return {};
    },

    async listDeliveries(req: notifierv1.ListDeliveriesRequest, ctx: CallContext): Promise<notifierv1.ListDeliveriesResponse> {
      const page = await deps.api.listDeliveries({ webhookId: req.webhookId, status: req.status, limit: req.limit, cursor: req.cursor }, ctx);
      return { items: page.items.map(deliveryOut), ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}) };
    },

    async enqueueActionDelivery(req: notifierv1.EnqueueActionDeliveryRequest, ctx: CallContext): Promise<notifierv1.EnqueueActionDeliveryResponse> {
      return { deliveryId: await deps.api.enqueueActionDelivery(req, ctx) };
    },
    async retryDelivery(req: notifierv1.RetryDeliveryRequest, ctx: CallContext): Promise<notifierv1.RetryDeliveryResponse> {
      return { delivery: deliveryOut(await deps.api.retryDelivery(req.webhookId, req.deliveryId, ctx)) };
    },
  };
}
