/**
 * What the notifier's API needs from outside, as ports: a user's notifications, webhooks and
 * their deliveries (PostgreSQL, store/).
 */

export interface NotificationView {
  id: string;
  kind: string;
  recordType: string;
  recordId: string;
  eventId: number | null;
  actor: string | null;
  createdAt: string;
  readAt: string | null;
}

export interface WebhookView {
  id: string;
  url: string;
  kind: string;
  hasSecret: boolean;
  entityTypes: string[];
  actions: string[];
  active: boolean;
  disabledAt: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryRow {
  id: string;
  webhookId: string;
  eventId: number;
  entityType: string;
  entityId: string;
  action: string;
}

/** A delivery as listed: the row the follower queued, and what its attempts recorded. */
export interface DeliveryView extends DeliveryRow {
  status: string;
  attempts: number;
  statusCode: number | null;
  latencyMs: number | null;
  response: string | null;
  error: string | null;
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  deliveredAt: string | null;
  createdAt: string;
}

/** A webhook as it is created (the secret in clear; the store seals it). */
export interface NewWebhook {
  id: string;
  url: string;
  kind: string;
  secret: string | null;
  entityTypes: string[];
  actions: string[];
  active: boolean;
  createdBy: string | null;
}

/** The fields of a webhook change that are set (`secret: null` removes it). */
export interface WebhookChange {
  url?: string;
  kind?: string;
  secret?: string | null;
  entityTypes?: string[];
  actions?: string[];
  active?: boolean;
}

/** A retry asked for by hand: no such webhook, no such delivery of it, or the delivery put back in line. */
export type RetryOutcome = { kind: 'no_webhook' } | { kind: 'no_delivery' } | { kind: 'retried'; delivery: DeliveryView };

/** Notifications, webhooks and deliveries as the API reads and changes them. */
export interface NotifierApiStore {
  /** `limit + 1` notifications of `userId` below `before` (newest first). */
  notifications(userId: string, unreadOnly: boolean, limit: number, before: string | null): Promise<NotificationView[]>;
  /** Marks one of `userId`'s notifications read (kept as first read); undefined when it is not theirs. */
  markRead(userId: string, id: string): Promise<NotificationView | undefined>;
  /** Marks every unread notification of `userId` read; how many. */
  markAllRead(userId: string): Promise<number>;
  createWebhook(w: NewWebhook): Promise<WebhookView>;
  webhooks(): Promise<WebhookView[]>;
  webhook(id: string): Promise<WebhookView | undefined>;
  /**
   * Applies a change. Switching a webhook on clears the notifier's disabling and its failure
   * streak, so it is judged afresh. Undefined when there is no such webhook.
   */
  updateWebhook(id: string, c: WebhookChange): Promise<WebhookView | undefined>;
  /** Deletes the webhook and its deliveries; false when there was none. */
  deleteWebhook(id: string): Promise<boolean>;
  /** `limit + 1` deliveries of a webhook below `before` (newest first); null when there is no such webhook. */
  deliveries(webhookId: string, status: string | null, limit: number, before: string | null): Promise<DeliveryView[] | null>;
  /**
   * In one transaction: puts a delivery back in line for an attempt now, with a fresh retry
   * window; a delivery already delivered is sent again (a receiver asked for it). A webhook the
   * notifier switched off is switched on again (an Admin retrying by hand says the target is
   * back); one an Admin switched off stays off, and the delivery waits for it.
   */
  retry(webhookId: string, deliveryId: string): Promise<RetryOutcome>;
}
