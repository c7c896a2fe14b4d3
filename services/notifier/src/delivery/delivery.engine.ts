/**
 * The delivery engine (docs/notifier.md, "Delivery"): claims the due head of each webhook's
 * line, at most `concurrency` attempts in flight across webhooks (one per webhook), sends it,
 * and records the outcome — delivered, retried after a backoff with full jitter, or dead once
 * the retry window has passed. A webhook whose head dies has been failing for the whole window:
 * it is switched off and every Admin gets a `webhook_disabled` notification. The engine never
 * holds a transaction across an attempt; the claim's lease covers it. The deliveries of webhook
 * actions (`actions`) share the slots, the sender, the signature and the retry schedule; each is
 * its own line, and one that dies switches nothing off.
 */
import { IntervalLoop, newId, type Logger } from '@reelbase/lib-platform';
import type { ActionDeliveryStore, AttemptResult, ClaimedDelivery, DeliveryStore } from '../domain/ports.js';
import { backoffMs, chatBody, isDelivered, signature, type RetrySchedule } from '../domain/delivery.policy.js';
import type { NotifierMetrics } from '../metrics.js';
import type { HttpSender, SendOutcome } from './http.sender.js';

export const USER_AGENT = 'reelbase-notifier/1';

/** Longest wait of a stop for the attempts in flight. */
export const STOP_WAIT_MS = 3000;

/** Deliveries of one webhook sent in a row by one slot before it is offered to the others. */
export const CHAIN_MAX = 50;

export interface DeliveryEngineOptions {
  repo: DeliveryStore;
  /** The deliveries of webhook actions (docs/notifier.md, "Action deliveries"). */
  actions?: ActionDeliveryStore;
  sender: HttpSender;
  schedule: RetrySchedule;
  concurrency: number;
  timeoutMs: number;
  pollMs: number;
  logger: Logger;
  metrics: NotifierMetrics;
  /** How often the backlog and dead gauges are refreshed. */
  gaugeRefreshMs?: number;
}

/** The line a delivery waits in: its webhook's, or its own for an action delivery. */
const lineOf = (d: Pick<ClaimedDelivery, 'webhookId' | 'actionId' | 'id'>): string => (d.actionId !== undefined ? `action:${d.id}` : d.webhookId);

/**
 * The headers of one attempt (docs/api-notes.md, Webhooks and Actions): an action delivery names
 * its action instead of an event and a webhook.
 */
export function deliveryHeaders(d: Pick<ClaimedDelivery, 'eventId' | 'webhookId' | 'actionId' | 'id' | 'secret'>, body: string): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...(d.actionId !== undefined ? { 'x-action-id': d.actionId } : { 'x-event-id': String(d.eventId), 'x-webhook-id': d.webhookId }),
    'x-delivery-id': d.id,
  };
  if (d.secret) h['x-signature'] = signature(d.secret, body);
  return h;
}

/** The body an attempt sends: the event for `webhook`, the text message for `chat`. */
export function deliveryBody(d: Pick<ClaimedDelivery, 'kind' | 'body' | 'chatText'>): string {
  return d.kind === 'chat' ? chatBody(d.chatText ?? '') : d.body;
}

/** The columns an outcome writes. */
function resultOf(outcome: SendOutcome): AttemptResult {
  const failedStatus = outcome.statusCode !== null && !isDelivered(outcome.statusCode);
  return {
    delivered: outcome.statusCode !== null && !failedStatus,
    statusCode: outcome.statusCode,
    latencyMs: outcome.latencyMs,
    response: outcome.response,
    error: outcome.error ?? (failedStatus ? `HTTP ${outcome.statusCode}` : null),
  };
}

export class DeliveryEngine {
  private running = false;
  private inFlight = 0;
  /** The webhooks whose line has an attempt in flight in this process. */
  private readonly busy = new Set<string>();
  /** Outcomes waiting to be recorded. */
  private readonly results: { d: ClaimedDelivery; outcome: SendOutcome; n: number }[] = [];
  private flushing = false;
  private pumping = false;
  private pumpAgain = false;
  private timer: NodeJS.Timeout | null = null;
  private gauges: IntervalLoop | null = null;
  /** Milliseconds a claim holds its head: the attempt's timeout plus room to record the outcome. */
  private readonly leaseMs: number;

  constructor(private readonly opts: DeliveryEngineOptions) {
    this.leaseMs = opts.timeoutMs + 5000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
    this.gauges = new IntervalLoop(
      this.opts.gaugeRefreshMs ?? 5000,
      () => this.refreshGauges(),
      (err) => this.opts.logger.debug({ err }, 'refreshing the delivery gauges failed'),
      {
        immediate: true,
        stopTimeoutMs: STOP_WAIT_MS,
      },
    );
    this.gauges.start();
  }

  /**
   * New deliveries were queued (for `webhookIds`, when known) or a retry was requested: look for
   * due heads now. Deliveries queued only behind lines this process is sending need no claim: each
   * such line takes its next head when its outcome is recorded (so a webhook whose target hangs
   * costs no query per event while its attempt waits).
   */
  nudge(webhookIds?: readonly string[]): void {
    if (!this.running) return;
    if (webhookIds && webhookIds.length > 0 && webhookIds.every((id) => this.busy.has(id))) return;
    this.schedule();
  }

  /**
   * Stops claiming and waits (at most {@link STOP_WAIT_MS}) for the attempts in flight to record
   * their outcome. One still waiting for a slow target is left to its lease: it is sent again
   * once the lease runs out, by another replica or after the restart.
   */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await this.gauges?.stop();
    const until = Date.now() + STOP_WAIT_MS;
    while (this.inFlight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    if (this.inFlight > 0)
      this.opts.logger.warn({ in_flight: this.inFlight }, 'stopping with attempts in flight; their leases will run out and they are sent again');
  }

  private schedule(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    let wait = this.opts.pollMs;
    try {
      while (this.running && this.inFlight < this.opts.concurrency) {
        this.pumpAgain = false;
        const want = this.opts.concurrency - this.inFlight;
        // Action deliveries first, in at most a quarter of the free slots (one at least), so a
        // backlog of webhook events never keeps a user's action waiting; then webhook heads; then
        // more action deliveries in the slots the webhooks left.
        const { actions } = this.opts;
        const share = actions ? Math.max(1, Math.floor(want / 4)) : 0;
        const claimed = actions ? await actions.claim(share, this.leaseMs) : [];
        const moreActions = actions !== undefined && claimed.length === share;
        if (claimed.length < want) claimed.push(...(await this.opts.repo.claim(want - claimed.length, this.leaseMs)));
        if (moreActions && claimed.length < want) claimed.push(...(await actions.claim(want - claimed.length, this.leaseMs)));
        for (const d of claimed) this.launch(d);
        if (claimed.length === 0) {
          const dues = [await this.opts.repo.nextDueInMs(), this.opts.actions ? await this.opts.actions.nextDueInMs() : null];
          for (const due of dues) if (due !== null) wait = Math.min(wait, Math.max(due, 1));
          break;
        }
        // Fewer due heads than free slots: the rest wait for a nudge, a finished line or the timer.
        if (claimed.length < want) break;
      }
    } catch (err) {
      this.opts.logger.warn({ err }, 'claiming deliveries failed; retrying');
    } finally {
      this.pumping = false;
    }
    if (!this.running) return;
    if (this.pumpAgain) {
      this.pumpAgain = false;
      this.schedule();
    } else if (this.inFlight < this.opts.concurrency) {
      this.timer = setTimeout(() => this.schedule(), wait);
    }
  }

  /** Starts a line with `d` in a free slot. */
  private launch(d: ClaimedDelivery): void {
    this.inFlight++;
    this.busy.add(lineOf(d));
    this.send(d, 1);
  }

  /** Sends `d` (the `n`-th of its line in a row); its outcome is recorded by the next flush. */
  private send(d: ClaimedDelivery, n: number): void {
    const body = deliveryBody(d);
    void this.opts.sender.send(d.url, deliveryHeaders(d, body), body).then((outcome) => {
      this.results.push({ d, outcome, n });
      if (!this.flushing) void this.flush();
    });
  }

  /**
   * Records every outcome that has arrived, in as few statements as possible ("group commit"):
   * all the delivered ones in one statement that also claims each of those webhooks' next head
   * (sent at once in the same slot, up to {@link CHAIN_MAX} in a row), each failure on its own.
   * Outcomes arriving meanwhile wait for the next round, so the batch grows with the load.
   */
  private async flush(): Promise<void> {
    this.flushing = true;
    const { repo, metrics, logger } = this.opts;
    try {
      while (this.results.length > 0) {
        const batch = this.results.splice(0);
        const succeeded = batch.filter((x) => x.outcome.statusCode !== null && isDelivered(x.outcome.statusCode));
        const delivered = succeeded.filter((x) => x.d.actionId === undefined);
        const actionsDelivered = succeeded.filter((x) => x.d.actionId !== undefined);
        let next = new Map<string, ClaimedDelivery>();
        if (delivered.length > 0) {
          for (const x of delivered) {
            metrics.attempts.inc({ outcome: 'delivered' });
            metrics.attemptSeconds.observe({ outcome: 'delivered' }, x.outcome.latencyMs / 1000);
          }
          try {
            const res = await repo.deliveredMany(
              delivered.map((x) => ({ d: x.d, r: resultOf(x.outcome), chain: this.running && x.n < CHAIN_MAX })),
              this.leaseMs,
            );
            for (const x of delivered) {
              if (res.recorded.has(x.d.id)) metrics.endToEndSeconds.observe((x.d.sinceEventMs + x.outcome.latencyMs) / 1000);
            }
            next = new Map(res.next.map((d) => [d.webhookId, d]));
          } catch (err) {
            logger.error({ err, deliveries: delivered.length }, 'recording deliveries failed; their leases will run out and they are sent again');
          }
        }
        if (actionsDelivered.length > 0 && this.opts.actions) {
          for (const x of actionsDelivered) {
            metrics.attempts.inc({ outcome: 'delivered' });
            metrics.attemptSeconds.observe({ outcome: 'delivered' }, x.outcome.latencyMs / 1000);
          }
          try {
            await this.opts.actions.delivered(actionsDelivered.map((x) => ({ d: x.d, r: resultOf(x.outcome) })));
          } catch (err) {
            logger.error({ err, deliveries: actionsDelivered.length }, 'recording action deliveries failed; their leases will run out and they are sent again');
          }
        }
        for (const x of batch) {
          if (succeeded.includes(x)) continue;
          try {
            await this.recordFailure(x.d, x.outcome);
          } catch (err) {
            logger.error({ err, delivery: x.d.id }, 'recording a failed attempt failed; the lease will run out and it is sent again');
          }
        }
        let freed = false;
        for (const x of batch) {
          const following = x.d.actionId === undefined ? next.get(x.d.webhookId) : undefined;
          if (following) this.send(following, x.n + 1);
          else {
            this.inFlight--;
            this.busy.delete(lineOf(x.d));
            freed = true;
          }
        }
        if (freed && this.running) this.schedule();
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * Records a failed attempt: retried after a backoff, or dead once the retry window is over —
   * judged by the database clock in the statement that records it, the clock the webhook's
   * failure streak is measured by. A head that died switches its webhook off; a head still
   * within its window never does, so it is always attempted again.
   */
  private async recordFailure(d: ClaimedDelivery, outcome: SendOutcome): Promise<void> {
    const { metrics, repo, schedule } = this.opts;
    const result = resultOf(outcome);
    const store = d.actionId !== undefined ? this.opts.actions : repo;
    if (!store) return;
    const status = await store.failed(d, result, backoffMs(schedule, d.attempts + 1), schedule.windowMs);
    const label = status === 'dead' ? 'dead' : outcome.blocked ? 'blocked' : 'failed';
    metrics.attempts.inc({ outcome: label });
    metrics.attemptSeconds.observe({ outcome: label }, outcome.latencyMs / 1000);
    if (status !== 'dead') return;
    if (d.actionId !== undefined) {
      this.opts.logger.warn({ delivery: d.id, action: d.actionId, attempts: d.attempts + 1, error: result.error }, 'action delivery is dead');
      return;
    }
    this.opts.logger.warn({ delivery: d.id, webhook: d.webhookId, event_id: d.eventId, attempts: d.attempts + 1, error: result.error }, 'delivery is dead');
    await this.disable(d.webhookId);
  }

  /**
   * Switches off a webhook failing for the whole window, marks dead its other deliveries whose
   * window is over, and tells every Admin.
   */
  private async disable(webhookId: string): Promise<void> {
    const { repo, schedule, metrics, logger } = this.opts;
    const done = await repo.disableIfFailing(webhookId, schedule.windowMs, (admins) =>
      admins.map((userId) => ({
        id: newId(),
        userId,
        kind: 'webhook_disabled',
        recordType: 'Webhook',
        recordId: webhookId,
        eventId: null,
        actor: null,
        projectId: null,
      })),
    );
    if (done) {
      metrics.disabled.inc();
      logger.warn({ webhook: webhookId, admins_notified: done.admins, also_dead: done.dead }, 'webhook disabled after failing for the whole retry window');
    }
  }

  private async refreshGauges(): Promise<void> {
    try {
      const { perWebhook, dead } = await this.opts.repo.backlog();
      this.opts.metrics.backlog.reset();
      for (const [id, n] of perWebhook) this.opts.metrics.backlog.set({ webhook: id }, n);
      this.opts.metrics.dead.set(dead);
    } catch (err) {
      this.opts.logger.debug({ err }, 'refreshing the delivery gauges failed');
    }
  }
}
