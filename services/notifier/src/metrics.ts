/**
 * The notifier's own metrics (docs/notifier.md, "Metrics"), beside lib-platform's RED metrics.
 */
import { Histogram, type Counter, type Gauge } from 'prom-client';
import type { Metrics } from '@reelbase/lib-platform';

export interface NotifierMetrics {
  /** Events applied from the log. */
  eventsApplied: Counter;
  /** Notifications written. */
  notifications: Counter;
  /** Failed reads or applications of the log (retried). */
  followErrors: Counter;
  /** Events in the log after the page just read (0 when up to date). */
  followLag: Gauge;
  /** Attempts by outcome: delivered, failed (retried later), dead, blocked (target refused by the address check). */
  attempts: Counter<'outcome'>;
  /** Duration of one attempt, by outcome. */
  attemptSeconds: Histogram<'outcome'>;
  /** From the event's commit to its delivery. */
  endToEndSeconds: Histogram;
  /** Pending deliveries per webhook. */
  backlog: Gauge<'webhook'>;
  /** Dead deliveries (kept until retried by hand). */
  dead: Gauge;
  /** Webhooks switched off after failing for the whole retry window. */
  disabled: Counter;
}

export function createNotifierMetrics(m: Metrics): NotifierMetrics {
  return {
    eventsApplied: m.counter('notifier_events_applied_total', 'Events applied from the event log'),
    notifications: m.counter('notifier_notifications_total', 'Notifications written'),
    followErrors: m.counter('notifier_follow_errors_total', 'Failed reads or applications of the event log (retried)'),
    followLag: m.gauge('notifier_follow_lag_events', 'Events in the log not yet applied, as of the last page read'),
    attempts: m.counter('notifier_delivery_attempts_total', 'Delivery attempts by outcome (delivered, failed, dead, blocked)', ['outcome']),
    attemptSeconds: m.histogram('notifier_delivery_attempt_seconds', 'Duration of one delivery attempt, by outcome', ['outcome']),
    endToEndSeconds: new Histogram({
      name: 'notifier_delivery_end_to_end_seconds',
      help: "From an event's commit to its delivery",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400],
      registers: [m.registry],
    }),
    backlog: m.gauge('notifier_delivery_backlog', 'Pending deliveries per webhook', ['webhook']),
    dead: m.gauge('notifier_deliveries_dead', 'Dead deliveries (kept, retryable by hand)'),
    disabled: m.counter('notifier_webhooks_disabled_total', 'Webhooks switched off after failing for the whole retry window'),
  };
}
