/**
 * The notifier's gRPC messages in their client form (docs/api-notes.md, "Notifications" and
 * "Webhooks"): snake_case keys, absent optionals as null, the event id as a number; and the
 * webhook bodies as the notifier's requests.
 */
import { AppError } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import type { z } from 'zod';
import type { WebhookCreate, WebhookPatch } from '../schemas/notifier.schema.js';

/** POST /webhooks → CreateWebhook (absent filters: every type, every action). */
export function createWebhookRequest(body: z.output<typeof WebhookCreate>): notifierv1.CreateWebhookRequest {
  return { url: body.url, kind: body.kind, secret: body.secret, entityTypes: body.entity_types ?? [], actions: body.actions ?? [], active: body.active };
}

/** PATCH /webhooks/{id} → UpdateWebhook: an absent key is kept, `"secret": null` clears the secret. */
export function updateWebhookRequest(id: string, body: z.output<typeof WebhookPatch>): notifierv1.UpdateWebhookRequest {
  return {
    id,
    url: body.url,
    kind: body.kind,
    secret: body.secret ?? undefined,
    clearSecret: body.secret === null,
    entityTypes: body.entity_types ? { values: body.entity_types } : undefined,
    actions: body.actions ? { values: body.actions } : undefined,
    active: body.active,
  };
}

/** A message the notifier must always set, missing: its answer is broken, not the client's request. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new AppError('internal', `the notifier answered without ${what}`);
  return value;
}

export function notificationJson(n: notifierv1.Notification | undefined) {
  const x = required(n, 'the notification');
  return {
    id: x.id,
    kind: x.kind,
    record: { type: x.recordType, id: x.recordId },
    event_id: x.eventId > 0 ? x.eventId : null,
    actor: x.actor ?? null,
    created_at: x.createdAt,
    read_at: x.readAt ?? null,
  };
}

export function webhookJson(w: notifierv1.Webhook | undefined) {
  const x = required(w, 'the webhook');
  return {
    id: x.id,
    url: x.url,
    kind: x.kind,
    has_secret: x.hasSecret,
    entity_types: x.entityTypes,
    actions: x.actions,
    active: x.active,
    disabled_at: x.disabledAt ?? null,
    created_by: x.createdBy ?? null,
    created_at: x.createdAt,
    updated_at: x.updatedAt,
  };
}

export function deliveryJson(d: notifierv1.Delivery | undefined) {
  const x = required(d, 'the delivery');
  return {
    id: x.id,
    webhook_id: x.webhookId,
    event_id: x.eventId,
    entity_type: x.entityType,
    entity_id: x.entityId,
    action: x.action,
    status: x.status,
    attempts: x.attempts,
    status_code: x.statusCode ?? null,
    latency_ms: x.latencyMs ?? null,
    response: x.response ?? null,
    error: x.error ?? null,
    next_attempt_at: x.nextAttemptAt ?? null,
    last_attempt_at: x.lastAttemptAt ?? null,
    delivered_at: x.deliveredAt ?? null,
    created_at: x.createdAt,
  };
}
