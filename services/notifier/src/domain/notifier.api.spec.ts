import type { CallContext } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { NotifierApi } from './notifier.api.js';
import type { DeliveryView, NotifierApiStore, RetryOutcome, WebhookView } from './ports.js';

const WEBHOOK = '0190a000-0000-7000-8000-000000000001';
const DELIVERY = '0190a000-0000-7000-8000-000000000002';
const as = (role: string, authKind: string, userId = 'u1'): CallContext => ({ requestId: 'r', principal: { userId, role, authKind } as never });
const admin = as('Admin', 'token');

const delivery = { id: DELIVERY, webhookId: WEBHOOK } as DeliveryView;

/** A store that answers `retry` with `outcome` and every list with `rows`, and counts its calls. */
function api(opts: { outcome?: RetryOutcome; deliveries?: DeliveryView[] | null; updated?: WebhookView } = {}) {
  const calls: string[] = [];
  let nudges = 0;
  const store = {
    retry: async () => (calls.push('retry'), opts.outcome ?? { kind: 'retried', delivery }),
    deliveries: async () => (calls.push('deliveries'), opts.deliveries === undefined ? [] : opts.deliveries),
    updateWebhook: async () => (calls.push('updateWebhook'), opts.updated),
    webhooks: async () => (calls.push('webhooks'), []),
    notifications: async () => (calls.push('notifications'), []),
  } as unknown as NotifierApiStore;
  const a = new NotifierApi({
    store,
    actions: { enqueue: async (d) => d.id },
    resolve: async () => ['93.184.216.34'],
    allowPrivateTargets: false,
    nudgeDeliveries: () => void nudges++,
  });
  return { a, calls, nudges: () => nudges };
}

describe('NotifierApi', () => {
  it('lets only Admins with a login token or API key at webhooks, and reaches no store otherwise', async () => {
    const { a, calls } = api();
    await expect(a.listWebhooks(as('Manager', 'token'))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(a.listWebhooks(as('Admin', 'service'))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(a.listWebhooks({ requestId: 'r' })).rejects.toMatchObject({ kind: 'unauthenticated' });
    expect(calls).toEqual([]);
    await a.listWebhooks(as('Admin', 'api_key'));
    expect(calls).toEqual(['webhooks']);
  });

  it('gives notifications to users only, and checks the page size and cursor before reading', async () => {
    const { a, calls } = api();
    await expect(a.listNotifications({ unreadOnly: false, limit: 0 }, as('Service', 'service'))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(a.listNotifications({ unreadOnly: false, limit: 201 }, as('Viewer', 'token'))).rejects.toMatchObject({ kind: 'invalid' });
    await expect(a.listNotifications({ unreadOnly: false, limit: 10, cursor: 'nope' }, as('Viewer', 'token'))).rejects.toMatchObject({ kind: 'invalid' });
    expect(calls).toEqual([]);
  });

  it('answers a retry by its outcome: not_found for a missing webhook or delivery, a nudge only when retried', async () => {
    const missingWebhook = api({ outcome: { kind: 'no_webhook' } });
    await expect(missingWebhook.a.retryDelivery(WEBHOOK, DELIVERY, admin)).rejects.toMatchObject({ kind: 'not_found', message: 'webhook not found' });
    const missingDelivery = api({ outcome: { kind: 'no_delivery' } });
    await expect(missingDelivery.a.retryDelivery(WEBHOOK, DELIVERY, admin)).rejects.toMatchObject({ kind: 'not_found', message: 'delivery not found' });
    expect(missingWebhook.nudges() + missingDelivery.nudges()).toBe(0);
    const ok = api();
    expect(await ok.a.retryDelivery(WEBHOOK, DELIVERY, admin)).toBe(delivery);
    expect(ok.nudges()).toBe(1);
    // An id that is no UUID names nothing: not_found without a query.
    const bad = api();
    await expect(bad.a.retryDelivery('x', DELIVERY, admin)).rejects.toMatchObject({ kind: 'not_found' });
    expect(bad.calls).toEqual([]);
  });

  it('answers not_found for the deliveries of a missing webhook', async () => {
    const { a } = api({ deliveries: null });
    await expect(a.listDeliveries({ webhookId: WEBHOOK, limit: 10 }, admin)).rejects.toMatchObject({ kind: 'not_found' });
  });
});
