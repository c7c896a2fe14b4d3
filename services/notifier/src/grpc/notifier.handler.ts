/**
 * gRPC `reelbase.notifier.v1.NotifierService`: transport ↔ store for notifications, webhooks and
 * deliveries. Roles are checked here again (the gateway checks them first): notifications
 * belong to the calling user only; webhooks and deliveries are Admin only.
 */
import type { notifierv1 } from '@reelbase/proto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AppError, guarded, isUuid, newId, type CallContext, type Problem, type UnaryHandlers } from '@reelbase/lib-platform';
import { checkTarget, type HostResolver } from '../domain/target.policy.js';
import { assertWebhookInput } from '../domain/webhook.input.js';
import type { ApiRepository, DeliveryView, NotificationView, WebhookChange, WebhookView } from '../store/api.repository.js';

/** Full proto name, used for registration and health. */
export const NOTIFIER_SERVICE_NAME = 'reelbase.notifier.v1.NotifierService';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'];

export interface NotifierHandlerDeps {
  orm: MikroORM;
  repo: ApiRepository;
  resolve: HostResolver;
  allowPrivateTargets: boolean;
  /** A retry or a webhook switched on: the delivery engine looks for due heads now. */
  nudgeDeliveries: () => void;
}

/** The calling user's id; only users (login tokens and API keys) have notifications. */
function userOf(ctx: CallContext): string {
  const p = ctx.principal;
  if (!p) throw new AppError('unauthenticated', 'no principal on the call');
  if ((p.authKind !== 'token' && p.authKind !== 'api_key') || !p.userId) throw new AppError('forbidden', 'only users have notifications');
  return p.userId;
}

/** The calling Admin's id. */
function adminOf(ctx: CallContext): string {
  const p = ctx.principal;
  if (!p) throw new AppError('unauthenticated', 'no principal on the call');
  if (p.role !== 'Admin' || (p.authKind !== 'token' && p.authKind !== 'api_key')) throw new AppError('forbidden', 'webhooks are for Admins only');
  return p.userId;
}

function pageLimit(limit: number): number {
  if (limit === 0) return DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw AppError.invalid([{ loc: ['limit'], msg: `Input should be between 1 and ${MAX_PAGE}`, type: 'less_than_equal' }]);
  }
  return limit;
}

function cursorOf(cursor: string | undefined): string | null {
  if (cursor === undefined || cursor === '') return null;
  if (!isUuid(cursor)) throw AppError.invalid([{ loc: ['cursor'], msg: 'not a cursor this list gave', type: 'value_error' }]);
  return cursor.toLowerCase();
}

/** `id` lower-cased, or not_found (an id that is no UUID names nothing). */
function idOf(id: string, what: string): string {
  if (!isUuid(id)) throw AppError.notFound(`${what} not found`);
  return id.toLowerCase();
}

const dedupe = (xs: string[]) => [...new Set(xs)];

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

/** Builds the handlers registered with GrpcServer under {@link NOTIFIER_SERVICE_NAME}. */
export function notifierHandlers(deps: NotifierHandlerDeps): UnaryHandlers<notifierv1.NotifierServiceServer> {
  const db = () => deps.orm.em.getConnection().getKnex();
  const { repo } = deps;

  const urlProblem = async (url: string): Promise<Problem[]> => {
    const why = await checkTarget(url, deps.resolve, deps.allowPrivateTargets);
    return why ? [{ loc: ['url'], msg: why, type: 'value_error' }] : [];
  };

  return {
    async listNotifications(req, ctx) {
      const userId = userOf(ctx);
      const limit = pageLimit(req.limit);
      const before = cursorOf(req.cursor);
      const rows = await guarded(() => repo.notifications(db(), userId, req.unreadOnly, limit, before));
      const items = rows.slice(0, limit);
      return { items: items.map(notificationOut), ...(rows.length > limit ? { nextCursor: items.at(-1)!.id } : {}) };
    },

    async markNotificationRead(req, ctx) {
      const userId = userOf(ctx);
      const id = idOf(req.id, 'notification');
      const n = await guarded(() => repo.markRead(db(), userId, id));
      if (!n) throw AppError.notFound('notification not found');
      return { notification: notificationOut(n) };
    },

    async markAllNotificationsRead(_req, ctx) {
      const userId = userOf(ctx);
      return { count: await guarded(() => repo.markAllRead(db(), userId)) };
    },

    async createWebhook(req, ctx) {
      const adminId = adminOf(ctx);
      const input = { url: req.url, kind: req.kind, secret: req.secret, entityTypes: req.entityTypes, actions: req.actions };
      assertWebhookInput(input, await urlProblem(req.url));
      const w = await guarded(() =>
        repo.createWebhook(db(), {
          id: newId(),
          url: req.url,
          kind: req.kind,
          secret: req.secret ?? null,
          entityTypes: dedupe(req.entityTypes),
          actions: dedupe(req.actions),
          active: req.active ?? true,
          createdBy: adminId || null,
        }),
      );
      return { webhook: webhookOut(w) };
    },

    async listWebhooks(_req, ctx) {
      adminOf(ctx);
      return { items: (await guarded(() => repo.webhooks(db()))).map(webhookOut) };
    },

    async getWebhook(req, ctx) {
      adminOf(ctx);
      const w = await guarded(() => repo.webhook(db(), idOf(req.id, 'webhook')));
      if (!w) throw AppError.notFound('webhook not found');
      return { webhook: webhookOut(w) };
    },

    async updateWebhook(req, ctx) {
      adminOf(ctx);
      const extra: Problem[] = [];
      if (req.clearSecret && req.secret !== undefined) extra.push({ loc: ['secret'], msg: 'set a secret or remove it, not both', type: 'value_error' });
      if (req.url !== undefined) extra.push(...(await urlProblem(req.url)));
      assertWebhookInput({ url: req.url, kind: req.kind, secret: req.secret, entityTypes: req.entityTypes?.values, actions: req.actions?.values }, extra);
      const id = idOf(req.id, 'webhook');
      const change: WebhookChange = {
        ...(req.url !== undefined ? { url: req.url } : {}),
        ...(req.kind !== undefined ? { kind: req.kind } : {}),
        ...(req.secret !== undefined ? { secret: req.secret } : req.clearSecret ? { secret: null } : {}),
        ...(req.entityTypes ? { entityTypes: dedupe(req.entityTypes.values) } : {}),
        ...(req.actions ? { actions: dedupe(req.actions.values) } : {}),
        ...(req.active !== undefined ? { active: req.active } : {}),
      };
      const w = await guarded(() => repo.updateWebhook(db(), id, change));
      if (!w) throw AppError.notFound('webhook not found');
      if (req.active) deps.nudgeDeliveries();
      return { webhook: webhookOut(w) };
    },

    async deleteWebhook(req, ctx) {
      adminOf(ctx);
      if (!(await guarded(() => repo.deleteWebhook(db(), idOf(req.id, 'webhook'))))) throw AppError.notFound('webhook not found');
      return {};
    },

    async listDeliveries(req, ctx) {
      adminOf(ctx);
      const limit = pageLimit(req.limit);
      const before = cursorOf(req.cursor);
      if (req.status !== undefined && !DELIVERY_STATUSES.includes(req.status)) {
        throw AppError.invalid([{ loc: ['status'], msg: "Input should be 'pending', 'delivered' or 'dead'", type: 'enum' }]);
      }
      const webhookId = idOf(req.webhookId, 'webhook');
      const rows = await guarded(async () => {
        if (!(await repo.webhook(db(), webhookId))) throw AppError.notFound('webhook not found');
        return repo.deliveries(db(), webhookId, req.status ?? null, limit, before);
      });
      const items = rows.slice(0, limit);
      return { items: items.map(deliveryOut), ...(rows.length > limit ? { nextCursor: items.at(-1)!.id } : {}) };
    },

    async retryDelivery(req, ctx) {
      adminOf(ctx);
      const webhookId = idOf(req.webhookId, 'webhook');
      const deliveryId = idOf(req.deliveryId, 'delivery');
      const d = await guarded(() =>
        db().transaction(async (trx) => {
          if (!(await repo.webhook(trx, webhookId))) throw AppError.notFound('webhook not found');
          return repo.retry(trx, webhookId, deliveryId);
        }),
      );
      if (!d) throw AppError.notFound('delivery not found');
      deps.nudgeDeliveries();
      return { delivery: deliveryOut(d) };
    },
  };
}
