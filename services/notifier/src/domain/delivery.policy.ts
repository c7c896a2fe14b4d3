/**
 * How deliveries are built and retried (docs/notifier.md, "Delivery"): which webhooks an
 * event goes to, the body and headers of each kind, the HMAC signature, and the retry
 * backoff (exponential with full jitter). Whether a failed delivery is dead (its retry window
 * is over) is judged by the database clock where the failure is recorded
 * (store/delivery.repository.ts, `failed`).
 */
import { createHmac } from 'node:crypto';
import { encodeContractEvent, notifierPolicy, type ContractEvent } from '@reelbase/lib-platform';

export const { WEBHOOK_KINDS } = notifierPolicy;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** What the filters of a webhook look at. */
export interface WebhookFilter {
  entityTypes: string[];
  actions: string[];
}

/** True when `event` passes the filters (an empty list lets everything through). */
export function matches(filter: WebhookFilter, event: Pick<ContractEvent, 'entity_type' | 'action'>): boolean {
  return (
    (filter.entityTypes.length === 0 || filter.entityTypes.includes(event.entity_type)) &&
    (filter.actions.length === 0 || filter.actions.includes(event.action))
  );
}

/**
 * The body of a `webhook` delivery: the event exactly as `GET /events` shows it (its `id` is
 * the log id, also sent as `X-Event-Id`). Stored once per event and sent byte for byte on every
 * attempt, so the signature of a retry is the signature of the first attempt.
 */
export function webhookBody(event: ContractEvent): string {
  return encodeContractEvent(event);
}

/** Names the chat text uses for people and records (what the notifier remembers). */
export interface ChatNames {
  /** Display name of the actor (name, else email), null when unknown. */
  actor: string | null;
  /** The record's code or name, null when unknown. */
  record: string | null;
}

const VERBS: Record<string, string> = { create: 'created', update: 'updated', delete: 'deleted' };
const MAX_CHANGES = 5;
const MAX_VALUE = 80;

/** One changed value in a line a person reads. */
function showValue(v: unknown): string {
  let s: string;
  if (v === null) s = 'nothing';
  else if (typeof v === 'string') s = v;
  else if (typeof v === 'object' && !Array.isArray(v) && typeof (v as { type?: unknown }).type === 'string') s = `${(v as { type: string }).type}`;
  else s = JSON.stringify(v);
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

/** Slack's three characters that must be escaped in message text. */
function escapeSlack(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The text of a `chat` delivery: who did what to which record, and what changed, e.g.
 * `Ana Silva updated Shot SH010: status → ip, cut_in → 1001 (event 42)`.
 */
export function chatText(event: ContractEvent, names: ChatNames): string {
  const guest = typeof event.changes.guest_name === 'string' ? `${event.changes.guest_name} (guest)` : null;
  const who = names.actor ?? guest ?? (event.actor ? `user ${event.actor.slice(0, 8)}` : 'someone');
  const verb = VERBS[event.action] ?? event.action;
  const label =
    names.record ?? (typeof event.changes.code === 'string' ? event.changes.code : typeof event.changes.name === 'string' ? event.changes.name : null);
  const what = `${event.entity_type} ${label ?? event.entity_id.slice(0, 8)}`;
  let line = `${who} ${verb} ${what}`;
  if (event.entity_type === 'Note' && typeof event.changes.content === 'string') {
    line += `: “${showValue(event.changes.content)}”`;
  } else if (event.action === 'update') {
    const keys = Object.keys(event.changes);
    const shown = keys.slice(0, MAX_CHANGES).map((k) => `${k} → ${showValue(event.changes[k])}`);
    if (keys.length > MAX_CHANGES) shown.push(`${keys.length - MAX_CHANGES} more`);
    if (shown.length) line += `: ${shown.join(', ')}`;
  }
  return escapeSlack(`${line} (event ${event.id})`);
}

/** The body of a `chat` delivery. */
export function chatBody(text: string): string {
  return JSON.stringify({ text });
}

/** `X-Signature` for `body` signed with `secret`: `sha256=<hex HMAC-SHA256 of the raw body>`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The retry schedule of one deployment. */
export interface RetrySchedule {
  baseMs: number;
  maxMs: number;
  windowMs: number;
}

/**
 * Milliseconds until the next attempt after `failures` failed attempts (1 after the first):
 * a uniform draw in [0, min(max, base · 2^(failures-1))] ("full jitter"), so receivers that
 * come back are not hit by every sender at once.
 */
export function backoffMs(schedule: RetrySchedule, failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(schedule.maxMs, schedule.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 40));
  return Math.floor(random() * ceiling);
}

/** True for the HTTP statuses that count as delivered (2xx; a redirect is not followed and fails). */
export function isDelivered(status: number): boolean {
  return status >= 200 && status < 300;
}
