/**
 * The bounds of webhooks, notifications and deliveries (docs/notifier.md; docs/api-notes.md,
 * "Notifications" and "Webhooks"), written once: the gateway validates and documents the routes
 * with them, and the notifier checks what it is given against the same.
 */
import { WEBHOOK_SECRET_CHARS } from './outbound-url.policy.js';

export const WEBHOOK_KINDS = ['webhook', 'chat'] as const;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
/** A webhook's signing secret: the bounds of every webhook secret (outbound-url.policy.ts). */
export const MIN_SECRET_LENGTH = WEBHOOK_SECRET_CHARS.min;
export const MAX_SECRET_LENGTH = WEBHOOK_SECRET_CHARS.max;
/** Entity types, and actions, a webhook's filters list at most. */
export const MAX_FILTERS = 100;
/** Items of a page of notifications or deliveries: by default, and at most. */
export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;
