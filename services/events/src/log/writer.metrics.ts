/**
 * The writer's own metrics, registered on the service registry.
 */
import type { Metrics } from '@reelbase/lib-platform';

type Counter = ReturnType<Metrics['counter']>;
type Gauge = ReturnType<Metrics['gauge']>;
type Histogram = ReturnType<Metrics['histogram']>;

export interface WriterMetrics {
  /** Rows appended to the log. */
  appended: Counter;
  /** Messages acked without a new row (event_id already logged). */
  duplicates: Counter;
  /** Messages terminated because they cannot be logged, by reason. */
  skipped: Counter;
  /** Messages of the durable consumer not yet delivered (num_pending). */
  lag: Gauge;
  /** 1 while this replica holds the writer lock. */
  active: Gauge;
  /** Time to append and commit one batch. */
  batchDuration: Histogram;
  /** From the write's commit in records (occurred_at) to the commit of its row in the log. */
  writeToLog: Histogram;
}

/** Registers the writer metrics on `metrics`. */
export function createWriterMetrics(metrics: Metrics): WriterMetrics {
  return {
    appended: metrics.counter('events_appended_total', 'Events appended to the log'),
    duplicates: metrics.counter('events_duplicates_total', 'Redelivered or re-published events that were already in the log'),
    skipped: metrics.counter('events_skipped_total', 'Stream messages terminated because they cannot be logged', ['reason']),
    lag: metrics.gauge('events_consumer_lag', 'Messages of the event-log consumer not yet delivered (num_pending)'),
    active: metrics.gauge('events_writer_active', '1 while this replica holds the writer lock'),
    batchDuration: metrics.histogram('events_batch_duration_seconds', 'Time to append and commit one batch'),
    writeToLog: metrics.histogram(
      'events_write_to_log_seconds',
      "From a write's commit (occurred_at) to the commit of its event's row in the log",
      [],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    ),
  };
}
