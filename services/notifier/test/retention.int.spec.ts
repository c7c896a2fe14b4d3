/**
 * Retention of the delivery log (docs/notifier.md, "Retention") on the real schema: delivered
 * deliveries older than the period go, pending and dead ones stay, and an event body goes only once
 * no delivery refers to it.
 */
import { randomUUID } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { createLogger } from '@reelbase/lib-platform';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRetention } from '../src/delivery/retention.js';
import { RetentionRepository, uuidV7Floor } from '../src/store/retention.repository.js';
import { as, Receiver, sql, waitFor, world, type World } from './helpers.js';

const admin = randomUUID();
const DAY_MS = 86_400_000;

describe('delivery log retention', () => {
  let w: World;
  let receiver: Receiver;
  let base: string;
  let orm: MikroORM;

  beforeAll(async () => {
    receiver = new Receiver();
    base = await receiver.start();
    w = await world({ WEBHOOK_RETRY_WINDOW_MS: '400', WEBHOOK_DELIVERY_RETENTION_DAYS: '30' });
    w.log.append({ entity_type: 'User', entity_id: admin, actor: admin, changes: { name: 'Ada', role: 'Admin' } });
    await w.start();
    orm = await MikroORM.init({ clientUrl: w.db.url, entities: [], discovery: { warnWhenNoEntities: false }, allowGlobalContext: true, debug: false });
  });
  afterAll(async () => {
    await orm?.close();
    await w?.close();
    await receiver?.close();
  });

  it('deletes old delivered deliveries and unreferenced bodies; keeps pending, dead and recent ones', async () => {
    receiver.modes.set('/ok', 'up');
    receiver.modes.set('/bad', 'refuse');
    const ctx = as(admin, 'Admin');
    const ok = (await w.client.createWebhook({ url: `${base}/ok`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    const bad = (await w.client.createWebhook({ url: `${base}/bad`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    for (let i = 0; i < 5; i++) w.log.append({ entity_type: 'Shot', actor: admin, changes: { code: `r${i}` } });
    await waitFor(() => receiver.uniqueAt('/ok').length === 5, 10_000, 'five deliveries to /ok');
    // /bad: its head goes dead and the webhook is switched off; the rest wait, pending.
    await waitFor(async () => {
      const rows = await sql<{ status: string }>(w, 'select status from notifier.delivery where webhook_id = ?', [bad.id]);
      return rows.some((r) => r.status === 'dead');
    });
    const count = async (where: string) => Number((await sql<{ n: string }>(w, `select count(*) as n from notifier.delivery where ${where}`))[0]!.n);
    const bodies = async () => Number((await sql<{ n: string }>(w, 'select count(*) as n from notifier.event_body'))[0]!.n);
    await waitFor(async () => (await count(`webhook_id = '${ok.id}' and status = 'delivered'`)) === 5, 5000, 'five recorded as delivered');
    expect(await bodies()).toBe(5);

    const retention = new DeliveryRetention({
      repo: new RetentionRepository(orm),
      retentionDays: 30,
      intervalMs: 60_000,
      batch: 2,
      logger: createLogger('notifier-test', 'silent'),
    });
    // Today: everything is younger than 30 days.
    expect(await retention.pruneOnce()).toEqual({ deliveries: 0, bodies: 0 });
    expect(await count(`webhook_id = '${ok.id}'`)).toBe(5);

    // 40 days on: the delivered ones go (in batches of 2); the bodies stay, /bad's deliveries refer to them.
    const later = Date.now() + 40 * DAY_MS;
    expect(await retention.pruneOnce(later)).toEqual({ deliveries: 5, bodies: 0 });
    expect(await count(`webhook_id = '${ok.id}'`)).toBe(0);
    expect(await count(`webhook_id = '${bad.id}' and status = 'dead'`)).toBe(1);
    expect(await count(`webhook_id = '${bad.id}' and status = 'pending'`)).toBe(4);
    expect(await bodies()).toBe(5);

    // Once the webhook is deleted (its deliveries with it), nothing refers to the bodies.
    await w.client.deleteWebhook({ id: bad.id }, ctx);
    expect(await retention.pruneOnce(later)).toEqual({ deliveries: 0, bodies: 5 });
    expect(await bodies()).toBe(0);
  });

  it('finds old rows by their UUID v7 id: the floor of a millisecond sorts below every id made in it', () => {
    expect(uuidV7Floor(0)).toBe('00000000-0000-7000-8000-000000000000');
    expect(uuidV7Floor(0x0123456789ab)).toBe('01234567-89ab-7000-8000-000000000000');
    const ms = Date.now();
    expect(uuidV7Floor(ms) <= uuidV7Floor(ms + 1)).toBe(true);
  });
});
