/**
 * Where the schema service POSTs to on a user's behalf (custom webhook actions, scheduled
 * webhooks; docs/api-notes.md, "Actions", "Scheduler"): an http or https URL without a user name
 * or password, at most {@link MAX_OUTBOUND_URL_CHARS} characters. The gateway validates and
 * documents request bodies with it and the schema service checks them again with the same schema.
 * Whether the host is public is the notifier's check, at delivery (docs/notifier.md).
 */
import { z } from 'zod';

/** Longest outbound URL accepted. */
export const MAX_OUTBOUND_URL_CHARS = 2048;

export const OutboundUrl = z
  .url({ protocol: /^https?$/ })
  .max(MAX_OUTBOUND_URL_CHARS)
  .refine((u) => {
    try {
      const url = new URL(u);
      return !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'the URL must not carry a user name or password');

/** A webhook's signing secret (a custom action's, a scheduled webhook's): its length bounds. */
export const WEBHOOK_SECRET_CHARS = { min: 16, max: 256 } as const;

/** A webhook's signing secret as a body gives it. */
export const WebhookSecret = z.string().min(WEBHOOK_SECRET_CHARS.min).max(WEBHOOK_SECRET_CHARS.max);
