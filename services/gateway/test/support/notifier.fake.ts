/** The notifier in memory over `state.notifier`. */
import { AppError, newId, type CallContext } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import { now, type FakeState, type Track } from './fake.state.js';

export function fakeNotifier(state: FakeState, track: Track) {
  // The notifier's rules as the gateway relies on them: own notifications only (another user's is
  // not_found), webhooks for Admins only, a loopback URL refused at ["url"], unknown ids not_found.
  const me = (ctx: CallContext) => ctx.principal?.userId ?? '';
  const mine = (ctx: CallContext, id: string) => {
    const row = state.notifier.notifications.find((x) => x.n.id === id && x.userId === me(ctx));
    if (!row) throw AppError.notFound(`notification ${id} not found`);
    return row;
  };
  const adminOnly = (ctx: CallContext) => {
    if (ctx.principal?.role !== 'Admin') throw new AppError('forbidden', 'only an Admin may manage webhooks');
  };
  const hook = (id: string) => {
    const h = state.notifier.webhooks.get(id);
    if (!h) throw AppError.notFound(`webhook ${id} not found`);
    return h;
  };
  const refuseLoopback = (url: string | undefined) => {
    if (url && new URL(url).hostname === '127.0.0.1')
      throw AppError.invalid([{ loc: ['url'], msg: 'the host resolves to a loopback address', type: 'value_error' }]);
  };
  const notifier = {
    listNotifications: async (req: notifierv1.ListNotificationsRequest, ctx: CallContext) => {
      track('notifier', 'listNotifications', req, ctx);
      const items = state.notifier.notifications
        .filter((x) => x.userId === me(ctx) && (!req.unreadOnly || !x.n.readAt))
        .map((x) => x.n)
        .reverse();
      const start = req.cursor ? Number(req.cursor) : 0;
      const page = items.slice(start, start + req.limit);
      return { items: page, nextCursor: start + req.limit < items.length ? String(start + req.limit) : undefined };
    },
    markNotificationRead: async (req: notifierv1.MarkNotificationReadRequest, ctx: CallContext) => {
      track('notifier', 'markNotificationRead', req, ctx);
      const row = mine(ctx, req.id);
      row.n = { ...row.n, readAt: row.n.readAt ?? now() };
      return { notification: row.n };
    },
    markAllNotificationsRead: async (req: notifierv1.MarkAllNotificationsReadRequest, ctx: CallContext) => {
      track('notifier', 'markAllNotificationsRead', req, ctx);
      let count = 0;
      for (const row of state.notifier.notifications) {
        if (row.userId !== me(ctx) || row.n.readAt) continue;
        row.n = { ...row.n, readAt: now() };
        count++;
      }
      return { count };
    },
    createWebhook: async (req: notifierv1.CreateWebhookRequest, ctx: CallContext) => {
      track('notifier', 'createWebhook', req, ctx);
      adminOnly(ctx);
      refuseLoopback(req.url);
      const t = now();
      const w: notifierv1.Webhook = {
        id: newId(),
        url: req.url,
        kind: req.kind,
        hasSecret: req.secret !== undefined,
        entityTypes: req.entityTypes,
        actions: req.actions,
        active: req.active ?? true,
        createdBy: me(ctx),
        createdAt: t,
        updatedAt: t,
      };
      state.notifier.webhooks.set(w.id, { w, secret: req.secret });
      return { webhook: w };
    },
    listWebhooks: async (req: notifierv1.ListWebhooksRequest, ctx: CallContext) => {
      track('notifier', 'listWebhooks', req, ctx);
      adminOnly(ctx);
      return { items: [...state.notifier.webhooks.values()].map((h) => h.w) };
    },
    getWebhook: async (req: notifierv1.GetWebhookRequest, ctx: CallContext) => {
      track('notifier', 'getWebhook', req, ctx);
      adminOnly(ctx);
      return { webhook: hook(req.id).w };
    },
    updateWebhook: async (req: notifierv1.UpdateWebhookRequest, ctx: CallContext) => {
      track('notifier', 'updateWebhook', req, ctx);
      adminOnly(ctx);
      const h = hook(req.id);
      refuseLoopback(req.url);
      const secret = req.clearSecret ? undefined : (req.secret ?? h.secret);
      const w: notifierv1.Webhook = {
        ...h.w,
        url: req.url ?? h.w.url,
        kind: req.kind ?? h.w.kind,
        hasSecret: secret !== undefined,
        entityTypes: req.entityTypes?.values ?? h.w.entityTypes,
        actions: req.actions?.values ?? h.w.actions,
        active: req.active ?? h.w.active,
        updatedAt: now(),
      };
      state.notifier.webhooks.set(w.id, { w, secret });
      return { webhook: w };
    },
    deleteWebhook: async (req: notifierv1.DeleteWebhookRequest, ctx: CallContext) => {
      track('notifier', 'deleteWebhook', req, ctx);
      adminOnly(ctx);
      hook(req.id);
      state.notifier.webhooks.delete(req.id);
      state.notifier.deliveries = state.notifier.deliveries.filter((d) => d.webhookId !== req.id);
      return {};
    },
    listDeliveries: async (req: notifierv1.ListDeliveriesRequest, ctx: CallContext) => {
      track('notifier', 'listDeliveries', req, ctx);
      adminOnly(ctx);
      hook(req.webhookId);
      const items = state.notifier.deliveries.filter((d) => d.webhookId === req.webhookId && (!req.status || d.status === req.status)).reverse();
      return { items: items.slice(0, req.limit), nextCursor: items.length > req.limit ? 'more' : undefined };
    },
    retryDelivery: async (req: notifierv1.RetryDeliveryRequest, ctx: CallContext) => {
      track('notifier', 'retryDelivery', req, ctx);
      adminOnly(ctx);
      hook(req.webhookId);
      const i = state.notifier.deliveries.findIndex((d) => d.id === req.deliveryId && d.webhookId === req.webhookId);
      if (i < 0) throw AppError.notFound(`delivery ${req.deliveryId} not found`);
      state.notifier.deliveries[i] = { ...state.notifier.deliveries[i]!, status: 'pending', nextAttemptAt: now() };
      return { delivery: state.notifier.deliveries[i] };
    },
  };
  return notifier;
}
