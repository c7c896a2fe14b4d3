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

describe('DeliveryEngine with action deliveries', () => {
  let engine: DeliveryEngine | null = null;
  afterEach(async () => {
    await engine?.stop();
    engine = null;
  });

  it('sends action deliveries beside webhook heads, records their outcomes in their own store, and switches nothing off', async () => {
    const repo = new CountingRepo();
    const recorded: string[] = [];
    const disabled: string[] = [];
    const webhookRepo = Object.assign(repo, {
      deliveredMany: async (items: { d: ClaimedDelivery }[]) => {
        items.forEach((x) => recorded.push(`webhook delivered ${x.d.id}`));
        return { recorded: new Set(items.map((x) => x.d.id)), next: [] };
      },
      failed: async () => 'dead' as const,
      disableIfFailing: async (id: string) => (disabled.push(id), null),
    });
    const action = (id: string): ClaimedDelivery => ({
      ...delivery('', 0),
      id,
      webhookId: '',
      actionId: 'publish',
      secret: 'action-secret-0123456789',
      body: '{"a":1}',
    });
    const queued = [action('a1'), action('a2')];
    const actions = {
      claimLimits: [] as number[],
      enqueue: async () => '',
      claim: async (limit: number) => (actions.claimLimits.push(limit), queued.splice(0, limit)),
      delivered: async (items: { d: ClaimedDelivery }[]) => (
        items.forEach((x) => recorded.push(`action delivered ${x.d.id}`)),
        new Set(items.map((x) => x.d.id))
      ),
      failed: async (d: ClaimedDelivery) => (recorded.push(`action failed ${d.id}`), 'dead' as const),
      nextDueInMs: async () => null,
    };
    const sent: Array<{ url: string; headers: Record<string, string> }> = [];
    const sender = {
      send: async (url: string, headers: Record<string, string>) => {
        sent.push({ url, headers });
        const ok = headers['x-delivery-id'] !== 'a2';
        return { statusCode: ok ? 200 : 500, latencyMs: 1, response: null, error: null, blocked: false };
      },
    } as unknown as HttpSender;
    repo.heads.push(delivery('w1', 1));
    engine = new DeliveryEngine({
      repo: webhookRepo as unknown as DeliveryStore,
      actions,
      sender,
      schedule: { baseMs: 10, maxMs: 100, windowMs: 1000 },
      concurrency: 8,
      timeoutMs: 10_000,
      pollMs: 60_000,
      logger: createLogger('notifier-test', 'silent'),
      metrics: createNotifierMetrics(new Metrics('notifier_engine_spec_actions')),
      gaugeRefreshMs: 60_000,
    });
    engine.start();
    await settle();
    expect(actions.claimLimits[0]).toBe(2); // a quarter of the free slots first
    expect(recorded.sort()).toEqual(['action delivered a1', 'action failed a2', 'webhook delivered d-w1-1']);
    expect(disabled).toEqual([]);
    const a1 = sent.find((s) => s.headers['x-delivery-id'] === 'a1')!;
    expect(a1.headers).toMatchObject({ 'x-action-id': 'publish', 'content-type': 'application/json' });
    expect(a1.headers['x-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(a1.headers).not.toHaveProperty('x-webhook-id');
    expect(a1.headers).not.toHaveProperty('x-event-id');
    expect(sent.find((s) => s.headers['x-delivery-id'] === 'd-w1-1')!.headers).toMatchObject({ 'x-webhook-id': 'w1', 'x-event-id': '1' });
  });
});
