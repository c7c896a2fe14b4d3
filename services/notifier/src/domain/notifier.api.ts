/**
 * The notifier's API: a user's notifications, and webhooks and their deliveries. Roles are
 * checked here again (the gateway checks them first): notifications belong to the calling user
 * only; webhooks and deliveries are Admin only. Action deliveries are queued by the schema
 * service only (docs/notifier.md, "Action deliveries").
 */
import { AppError, isUuid, newId, notifierPolicy, type CallContext, type Problem } from '@reelbase/lib-platform';
import type { ActionDeliveryStore, DeliveryView, NotificationView, NotifierApiStore, WebhookChange, WebhookView } from './ports.js';
import { checkTarget, parseTargetUrl, type HostResolver } from './target.policy.js';
import { assertWebhookInput } from './webhook.input.js';

export const { DEFAULT_PAGE, MAX_PAGE } = notifierPolicy;
const DELIVERY_STATUSES: readonly string[] = notifierPolicy.DELIVERY_STATUSES;

export interface NotifierApiDeps {
  store: NotifierApiStore;
  /** Where action deliveries are queued. */
  actions: Pick<ActionDeliveryStore, 'enqueue'>;
  resolve: HostResolver;
  allowPrivateTargets: boolean;
  /** A retry or a webhook switched on: the delivery engine looks for due heads now. */
  nudgeDeliveries: () => void;
}

/** One page and, when more follow, the cursor of the next. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** A webhook create as the caller sent it. */
export interface WebhookCreate {
  url: string;
  kind: string;
  secret?: string;
  entityTypes: string[];
  actions: string[];
  active?: boolean;
}

/** A webhook change as the caller sent it (absent: unchanged). */
export interface WebhookUpdate {
  id: string;
  url?: string;
  kind?: string;
  secret?: string;
  clearSecret?: boolean;
  entityTypes?: string[];
  actions?: string[];
  active?: boolean;
}

/** A webhook action's delivery as the schema service sends it. */
export interface ActionDeliveryRequest {
  deliveryId: string;
  actionId: string;
  url: string;
  secret?: string;
  bodyJson: string;
}

/** The service allowed to queue action deliveries (`Principal.via`). */
export const ACTION_DELIVERY_CALLER = 'schema';

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

/**
 * The projects the gateway names as hidden from the caller (docs/api-notes.md, "Restricted
 * projects"), lower-cased; an id that is no UUID is invalid at `hidden_project_ids`.
 */
function hiddenOf(ids: readonly string[] | undefined): string[] {
  const problems: Problem[] = [];
  (ids ?? []).forEach((id, i) => {
    if (!isUuid(id)) problems.push({ loc: ['hidden_project_ids', i], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
  });
  if (problems.length) throw AppError.invalid(problems);
  return dedupe((ids ?? []).map((id) => id.toLowerCase()));
}

/** `limit + 1` rows read: the page and, when the extra one came, the cursor after it. */
function pageOf<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, ...(rows.length > limit ? { nextCursor: items.at(-1)!.id } : {}) };
}

export class NotifierApi {
  constructor(private readonly deps: NotifierApiDeps) {}

  private async urlProblem(url: string): Promise<Problem[]> {
    const why = await checkTarget(url, this.deps.resolve, this.deps.allowPrivateTargets);
    return why ? [{ loc: ['url'], msg: why, type: 'value_error' }] : [];
  }

  async listNotifications(
    q: { unreadOnly: boolean; limit: number; cursor?: string; hiddenProjectIds?: readonly string[] },
    ctx: CallContext,
  ): Promise<Page<NotificationView>> {
    const userId = userOf(ctx);
    const limit = pageLimit(q.limit);
    const before = cursorOf(q.cursor);
    const hidden = hiddenOf(q.hiddenProjectIds);
    return pageOf(await this.deps.store.notifications(userId, q.unreadOnly, limit, before, hidden), limit);
  }

  async markRead(id: string, ctx: CallContext, hiddenProjectIds?: readonly string[]): Promise<NotificationView> {
    const userId = userOf(ctx);
    const hidden = hiddenOf(hiddenProjectIds);
    const n = await this.deps.store.markRead(userId, idOf(id, 'notification'), hidden);
    if (!n) throw AppError.notFound('notification not found');
    return n;
  }

  async markAllRead(ctx: CallContext, hiddenProjectIds?: readonly string[]): Promise<number> {
    const userId = userOf(ctx);
    return this.deps.store.markAllRead(userId, hiddenOf(hiddenProjectIds));
  }

  async createWebhook(req: WebhookCreate, ctx: CallContext): Promise<WebhookView> {
    const adminId = adminOf(ctx);
    assertWebhookInput(req, await this.urlProblem(req.url));
    return this.deps.store.createWebhook({
      id: newId(),
      url: req.url,
      kind: req.kind,
      secret: req.secret ?? null,
      entityTypes: dedupe(req.entityTypes),
      actions: dedupe(req.actions),
      active: req.active ?? true,
      createdBy: adminId || null,
    });
  }

  async listWebhooks(ctx: CallContext): Promise<WebhookView[]> {
    adminOf(ctx);
    return this.deps.store.webhooks();
  }

  async getWebhook(id: string, ctx: CallContext): Promise<WebhookView> {
    adminOf(ctx);
    const w = await this.deps.store.webhook(idOf(id, 'webhook'));
    if (!w) throw AppError.notFound('webhook not found');
    return w;
  }

  async updateWebhook(req: WebhookUpdate, ctx: CallContext): Promise<WebhookView> {
    adminOf(ctx);
    const extra: Problem[] = [];
    if (req.clearSecret && req.secret !== undefined) extra.push({ loc: ['secret'], msg: 'set a secret or remove it, not both', type: 'value_error' });
    if (req.url !== undefined) extra.push(...(await this.urlProblem(req.url)));
    assertWebhookInput({ url: req.url, kind: req.kind, secret: req.secret, entityTypes: req.entityTypes, actions: req.actions }, extra);
    const id = idOf(req.id, 'webhook');
    const change: WebhookChange = {
      ...(req.url !== undefined ? { url: req.url } : {}),
      ...(req.kind !== undefined ? { kind: req.kind } : {}),
      ...(req.secret !== undefined ? { secret: req.secret } : req.clearSecret ? { secret: null } : {}),
      ...(req.entityTypes ? { entityTypes: dedupe(req.entityTypes) } : {}),
      ...(req.actions ? { actions: dedupe(req.actions) } : {}),
      ...(req.active !== undefined ? { active: req.active } : {}),
    };
    const w = await this.deps.store.updateWebhook(id, change);
    if (!w) throw AppError.notFound('webhook not found');
    if (req.active) this.deps.nudgeDeliveries();
    return w;
  }

  async deleteWebhook(id: string, ctx: CallContext): Promise<void> {
    adminOf(ctx);
    if (!(await this.deps.store.deleteWebhook(idOf(id, 'webhook')))) throw AppError.notFound('webhook not found');
  }

  async listDeliveries(q: { webhookId: string; status?: string; limit: number; cursor?: string }, ctx: CallContext): Promise<Page<DeliveryView>> {
    adminOf(ctx);
    const limit = pageLimit(q.limit);
    const before = cursorOf(q.cursor);
    if (q.status !== undefined && !DELIVERY_STATUSES.includes(q.status)) {
      throw AppError.invalid([{ loc: ['status'], msg: "Input should be 'pending', 'delivered' or 'dead'", type: 'enum' }]);
    }
    const rows = await this.deps.store.deliveries(idOf(q.webhookId, 'webhook'), q.status ?? null, limit, before);
    if (!rows) throw AppError.notFound('webhook not found');
    return pageOf(rows, limit);
  }

  /**
   * Queues the delivery of a webhook action and returns its id at once; the engine sends it like
   * a webhook delivery. Only the schema service queues them (it checked who may run the action).
   */
  async enqueueActionDelivery(req: ActionDeliveryRequest, ctx: CallContext): Promise<string> {
    if (ctx.principal?.via !== ACTION_DELIVERY_CALLER) throw new AppError('forbidden', 'action deliveries are queued by the schema service only');
    const problems: Problem[] = [];
    if (!isUuid(req.deliveryId)) problems.push({ loc: ['delivery_id'], msg: 'Input should be a valid UUID', type: 'uuid_parsing' });
    if (req.actionId === '') problems.push({ loc: ['action_id'], msg: 'Field required', type: 'missing' });
    const target = parseTargetUrl(req.url);
    if (typeof target === 'string') problems.push({ loc: ['url'], msg: target, type: 'value_error' });
    try {
      JSON.parse(req.bodyJson);
    } catch {
      problems.push({ loc: ['body_json'], msg: 'Invalid JSON', type: 'json_invalid' });
    }
    if (problems.length) throw AppError.invalid(problems);
    const id = await this.deps.actions.enqueue({
      id: req.deliveryId.toLowerCase(),
      actionId: req.actionId,
      url: req.url,
      secret: req.secret || null,
      body: req.bodyJson,
    });
    this.deps.nudgeDeliveries();
    return id;
  }

  async retryDelivery(webhookId: string, deliveryId: string, ctx: CallContext): Promise<DeliveryView> {
    adminOf(ctx);
    const out = await this.deps.store.retry(idOf(webhookId, 'webhook'), idOf(deliveryId, 'delivery'));
    if (out.kind === 'no_webhook') throw AppError.notFound('webhook not found');
    if (out.kind === 'no_delivery') throw AppError.notFound('delivery not found');
    this.deps.nudgeDeliveries();
    return out.delivery;
  }
}
