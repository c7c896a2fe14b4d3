/**
 * Appends one batch of stream messages to the log: parse, append in one transaction,
 * publish the new rows live, ack. Messages that can never be logged are terminated so they
 * do not block the stream; a failure of the connection or of the writer's claim to the log
 * is rethrown (after nak-ing the batch) so the writer steps down and starts over.
 */
import type { JsMsg } from '@nats-io/jetstream';
import { encodeContractEvent, parseStreamMessage, type Logger, type NatsConnection, type NatsNames, type StreamEvent } from '@reelbase/lib-platform';
import { toContractEvent } from '../domain/append.plan.js';
import { StaleWriterError, type LogWriterSession as WriterSession } from '../domain/ports.js';
import type { WriterMetrics } from './writer.metrics.js';

/** A single message was handed back for redelivery (see appendParsed). */
const RETRY = Symbol('retry');

interface Parsed {
  msg: JsMsg;
  /** One event, or a batch's events (appended consecutively, in one transaction). */
  events: StreamEvent[];
}

/** True for a failure that says nothing about the batch's content: step down and retry. */
export function isWriterFailure(err: unknown, session: Pick<WriterSession, 'lost'>): boolean {
  if (session.lost || err instanceof StaleWriterError) return true;
  const code = (err as { code?: unknown })?.code;
  // No SQLSTATE: the client failed (closed, terminated, timed out), not the statement.
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  // 23505 can only be the primary key here (event_id conflicts are skipped): ids went stale.
  // Classes 08 (connection), 57 (operator intervention), 53 (resources) are the server's trouble.
  return code === '23505' || /^(08|57|53|58)/.test(code);
}

/** True for a failure caused by the row itself (bad value, violated check). */
export function isRowRejected(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code === '23514' || code === '23502');
}

export class BatchAppender {
  constructor(
    private readonly nc: NatsConnection,
    private readonly names: NatsNames,
    private readonly logger: Logger,
    private readonly metrics: WriterMetrics,
  ) {}

  /** Appends `msgs` after id `last`; resolves with the new last id. */
  async append(session: WriterSession, last: number, msgs: readonly JsMsg[]): Promise<number> {
    const parsed: Parsed[] = [];
    for (const msg of msgs) {
      const r = parseStreamMessage(msg.data);
      if (r.ok) {
        parsed.push({ msg, events: r.events });
        continue;
      }
      this.logger.warn({ subject: msg.subject, stream_seq: msg.seq, reason: r.reason }, 'skipping malformed event message');
      this.metrics.skipped.inc({ reason: 'malformed' });
      // No reason text: nats-server 2.9 does not understand `+TERM <reason>` and would redeliver.
      msg.term();
    }
    if (!parsed.length) return last;
    const at = await this.appendParsed(session, last, parsed);
    return at === RETRY ? last : at;
  }

  /**
   * Appends `batch` after `last`: the new last id, or {@link RETRY} when a single message
   * failed for a passing reason and was handed back for redelivery.
   */
  private async appendParsed(session: WriterSession, last: number, batch: Parsed[]): Promise<number | typeof RETRY> {
    const stopTimer = this.metrics.batchDuration.startTimer();
    let result;
    try {
      result = await session.append(
        last,
        batch.flatMap((p) => p.events),
      );
    } catch (err) {
      if (isWriterFailure(err, session)) {
        for (const p of batch) p.msg.nak();
        throw err;
      }
      if (batch.length > 1) {
        // Something in the batch is unloggable: find it with one transaction per message.
        this.logger.warn({ err, size: batch.length }, 'batch append failed; retrying message by message');
        let at = last;
        for (let i = 0; i < batch.length; i++) {
          const next = await this.appendParsed(session, at, [batch[i]!]);
          if (next === RETRY) {
            // Later messages may be later events of the same record: appending them now
            // would log them before the one handed back. Hand them back too, in order.
            for (const p of batch.slice(i + 1)) p.msg.nak(1000);
            return at;
          }
          at = next;
        }
        return at;
      }
      const p = batch[0]!;
      if (isRowRejected(err)) {
        this.logger.error({ err, event_id: p.events[0]?.event_id, events: p.events.length, stream_seq: p.msg.seq }, 'event rejected by the log; skipping it');
        this.metrics.skipped.inc({ reason: 'rejected' });
        p.msg.term();
      } else {
        this.logger.warn({ err, event_id: p.events[0]?.event_id }, 'event append failed; will be redelivered');
        p.msg.nak(1000);
        return RETRY;
      }
      return last;
    }
    stopTimer();
    // Publish in id order before acking: subscribers see rows as soon as they are durable.
    result.rows.forEach((row, i) => {
      this.nc.publish(this.names.liveEvent(row.entity_type), encodeContractEvent(toContractEvent(row, result.createdAt[i]!)));
    });
    for (const p of batch) p.msg.ack();
    this.metrics.appended.inc(result.rows.length);
    // The row's created_at is the write's occurred_at, so the lag is measured against the clock now.
    const now = Date.now();
    for (const row of result.rows) {
      const lag = (now - Date.parse(row.occurred_at)) / 1000;
      if (Number.isFinite(lag)) this.metrics.writeToLog.observe(Math.max(0, lag));
    }
    if (result.duplicates) this.metrics.duplicates.inc(result.duplicates);
    return result.last;
  }
}
