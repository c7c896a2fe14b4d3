import { Metrics, createLogger } from '@reelbase/lib-platform';
import { afterEach, describe, expect, it } from 'vitest';
import { createNotifierMetrics } from '../metrics.js';
import type { ClaimedDelivery, DeliveryStore } from '../domain/ports.js';
import { DeliveryEngine } from './delivery.engine.js';
import type { HttpSender, SendOutcome } from './http.sender.js';

const delivery = (webhookId: string, eventId: number): ClaimedDelivery => ({
  id: `d-${webhookId}-${eventId}`,
  claim: 'c',
  webhookId,
  eventId,
  url: 'https://hooks.example.com/x',
  kind: 'webhook',
  secret: null,
  body: '{}',
  chatText: null,
  attempts: 0,
  sinceEventMs: 0,
});

/** A store whose claims hand out the queued heads and count every claim statement. */
class CountingRepo {
  claims = 0;
  heads: ClaimedDelivery[] = [];
  async claim(limit: number): Promise<ClaimedDelivery[]> {
    this.claims++;
    return this.heads.splice(0, limit);
  }
  async nextDueInMs(): Promise<number | null> {
    return null;
  }
  async backlog(): Promise<{ perWebhook: Map<string, number>; dead: number }> {
    return { perWebhook: new Map(), dead: 0 };
  }
}

const settle = () => new Promise((r) => setTimeout(r, 30));

describe('DeliveryEngine.nudge', () => {
  let engine: DeliveryEngine | null = null;
  afterEach(async () => {
    await engine?.stop();
    engine = null;
  });

  it('claims nothing for deliveries queued behind a line it is sending (a hanging target costs no query per event)', async () => {
    const repo = new CountingRepo();
    // The target hangs: no attempt ever ends while the test runs.
    const sender = { send: () => new Promise<SendOutcome>(() => {}) } as unknown as HttpSender;
    engine = new DeliveryEngine({
      repo: repo as unknown as DeliveryStore,
      sender,
      schedule: { baseMs: 10, maxMs: 100, windowMs: 1000 },
      concurrency: 4,
      timeoutMs: 10_000,
      pollMs: 60_000,
      logger: createLogger('notifier-test', 'silent'),
      metrics: createNotifierMetrics(new Metrics('notifier_engine_spec')),
      gaugeRefreshMs: 60_000,
    });
    repo.heads.push(delivery('w1', 1));
    engine.start();
    await settle();
    const afterStart = repo.claims;
    expect(afterStart).toBeGreaterThan(0);

    // Events for w1 queue behind its head in flight: no claim.
    for (let i = 0; i < 20; i++) engine.nudge(['w1']);
    await settle();
    expect(repo.claims).toBe(afterStart);

    // A delivery for another webhook (or an unknown set: a retry by hand) is claimed at once.
    repo.heads.push(delivery('w2', 2));
    engine.nudge(['w1', 'w2']);
    await settle();
    expect(repo.claims).toBeGreaterThan(afterStart);
    const afterW2 = repo.claims;
    engine.nudge();
    await settle();
    expect(repo.claims).toBeGreaterThan(afterW2);
  });
});
