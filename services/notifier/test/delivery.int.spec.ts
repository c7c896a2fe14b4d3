/**
 * Webhook delivery against a real local HTTP target (time compressed): a target down and then
 * up receives every event once per X-Event-Id, in event order per webhook, signed; a delivery
 * that outlives the retry window is dead, its webhook is switched off and the Admins are told,
 * and a retry by hand delivers it; a hanging target times out. Every delivery ends delivered or
 * dead, or waits on an active webhook: also when the window ends while a failure is being
 * recorded, and for an attempted delivery behind the head when the webhook is switched off.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContractEvent } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import { as, Receiver, waitFor, world, type World } from './helpers.js';

const admin = randomUUID();
const artist = randomUUID();
let receiver: Receiver;
let base: string;

beforeAll(async () => {
  receiver = new Receiver();
  base = await receiver.start();
});

afterAll(async () => {
  await receiver?.close();
});

async function deliveries(w: World, webhookId: string, status?: string): Promise<notifierv1.Delivery[]> {
  return (await w.client.listDeliveries({ webhookId, limit: 200, ...(status ? { status } : {}) }, as(admin, 'Admin'))).items;
}

describe('a target that is down, then up', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
    await w.start();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('gets every matching event once per X-Event-Id, in order per webhook, signed, after retries', async () => {
    receiver.modes.set('/a', 'down');
    receiver.modes.set('/b', 'refuse');
    const ctx = as(admin, 'Admin');
    const a = (await w.client.createWebhook({ url: `${base}/a`, kind: 'webhook', secret: 'top-secret-0123456789', entityTypes: [], actions: [] }, ctx))
      .webhook!;
    const b = (await w.client.createWebhook({ url: `${base}/b`, kind: 'chat', entityTypes: ['Shot'], actions: [] }, ctx)).webhook!;
    const c = (await w.client.createWebhook({ url: `${base}/c`, kind: 'webhook', entityTypes: [], actions: ['delete'] }, ctx)).webhook!;
    expect(a.hasSecret).toBe(true);
    expect(JSON.stringify(a)).not.toContain('top-secret-0123456789');

    const sent: ContractEvent[] = [];
    for (let i = 0; i < 30; i++) {
      const type = i % 3 === 0 ? 'Asset' : 'Shot';
      sent.push(w.log.append({ entity_type: type, action: i % 2 ? 'update' : 'create', actor: artist, changes: { code: `x${i}`, status: 'ip' } }));
    }
    // While down: the heads are retried, nothing behind them is sent.
    await waitFor(async () => (await deliveries(w, a.id)).some((d) => d.attempts >= 3), 10_000, 'retries of the head');
    expect(new Set(receiver.all.filter((r) => r.path === '/a').map((r) => r.eventId))).toEqual(new Set([String(sent[0]!.id)]));
    const head = (await deliveries(w, a.id)).find((d) => d.eventId === sent[0]!.id)!;
    expect(head).toMatchObject({ status: 'pending', statusCode: 503, response: 'try later', error: 'HTTP 503' });
    expect(head.nextAttemptAt).toBeDefined();
    const bHead = (await deliveries(w, b.id)).find((d) => d.attempts > 0)!;
    expect(bHead.statusCode).toBeUndefined();
    expect(bHead.error).toBeTruthy();

    receiver.modes.set('/a', 'up');
    receiver.modes.set('/b', 'up');
    const shots = sent.filter((e) => e.entity_type === 'Shot');
    await waitFor(() => receiver.uniqueAt('/a').length === sent.length && receiver.uniqueAt('/b').length === shots.length, 15_000, 'every delivery');

    // Once per X-Event-Id (de-duplicated), in event order; each attempt only after the one before was delivered.
    expect(receiver.uniqueAt('/a').map((r) => Number(r.eventId))).toEqual(sent.map((e) => e.id));
    expect(receiver.uniqueAt('/b').map((r) => Number(r.eventId))).toEqual(shots.map((e) => e.id));
    const attemptsA = receiver.all.filter((r) => r.path === '/a').map((r) => Number(r.eventId));
    expect(attemptsA).toEqual([...attemptsA].sort((x, y) => x - y));
    expect(receiver.uniqueAt('/c')).toEqual([]);

    for (const r of receiver.uniqueAt('/a')) {
      const e = sent.find((x) => x.id === Number(r.eventId))!;
      expect(JSON.parse(r.body)).toEqual(e);
      expect(r.signature).toBe(`sha256=${createHmac('sha256', 'top-secret-0123456789').update(r.body).digest('hex')}`);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toMatch(/^reelbase-notifier\//);
    }
    const chat = receiver.uniqueAt('/b')[0]!;
    expect(chat.signature).toBeUndefined();
    expect(JSON.parse(chat.body)).toEqual({ text: expect.stringMatching(/created Shot x1 \(event 2\)|updated Shot x1: code → x1, status → ip \(event 2\)/) });

    await waitFor(async () => (await deliveries(w, a.id, 'delivered')).length === sent.length, 5000, 'delivered rows');
    const done = await deliveries(w, a.id);
    expect(done.every((d) => d.status === 'delivered' && d.statusCode === 200 && d.response === 'ok' && d.deliveredAt && d.latencyMs !== undefined)).toBe(true);
    expect(done.find((d) => d.eventId === sent[0]!.id)!.attempts).toBeGreaterThanOrEqual(4);
    expect(await deliveries(w, c.id)).toEqual([]);
  });
});

describe('a target down for the whole retry window', () => {
  let w: World;
  beforeAll(async () => {
    w = await world({ WEBHOOK_RETRY_WINDOW_MS: '400' });
    w.log.append({ entity_type: 'User', entity_id: admin, actor: admin, changes: { name: 'Ada', role: 'Admin' } });
    await w.start();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('goes dead, the webhook is switched off and the Admins told; a retry by hand delivers it and the rest follow in order', async () => {
    receiver.modes.set('/dead', 'refuse');
    const ctx = as(admin, 'Admin');
    const hook = (await w.client.createWebhook({ url: `${base}/dead`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    const sent = [1, 2, 3].map((i) => w.log.append({ entity_type: 'Shot', actor: artist, changes: { code: `d${i}` } }));

    const dead = await waitFor(async () => (await deliveries(w, hook.id, 'dead'))[0], 10_000, 'a dead delivery');
    expect(dead.eventId).toBe(sent[0]!.id);
    expect(dead.attempts).toBeGreaterThan(1);
    const off = await waitFor(
      async () => {
        const got = (await w.client.getWebhook({ id: hook.id }, ctx)).webhook!;
        return got.active ? null : got;
      },
      5000,
      'the webhook switched off',
    );
    expect(off.disabledAt).toBeDefined();
    const told = await waitFor(async () => (await w.client.listNotifications({ unreadOnly: true, limit: 10, hiddenProjectIds: [] }, ctx)).items[0]);
    expect(told).toMatchObject({ kind: 'webhook_disabled', recordType: 'Webhook', recordId: hook.id, eventId: 0 });
    // Switched off: the events behind the dead one wait.
    expect((await deliveries(w, hook.id, 'pending')).map((d) => d.eventId).sort()).toEqual([sent[1]!.id, sent[2]!.id]);

    receiver.modes.set('/dead', 'up');
    const retried = await w.client.retryDelivery({ webhookId: hook.id, deliveryId: dead.id }, ctx);
    expect(retried.delivery?.status).toBe('pending');
    await waitFor(() => receiver.uniqueAt('/dead').length === 3, 10_000, 'retried and following deliveries');
    expect(receiver.uniqueAt('/dead').map((r) => Number(r.eventId))).toEqual(sent.map((e) => e.id));
    expect((await w.client.getWebhook({ id: hook.id }, ctx)).webhook?.active).toBe(true);
    const unknown = await w.client.retryDelivery({ webhookId: hook.id, deliveryId: randomUUID() }, ctx).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ kind: 'not_found' });
  });

  it('a hanging target times out and is retried', async () => {
    receiver.modes.set('/hang', 'hang');
    const ctx = as(admin, 'Admin');
    const hook = (await w.client.createWebhook({ url: `${base}/hang`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    w.log.append({ entity_type: 'Shot', actor: artist, changes: { code: 'h1' } });
    const d = await waitFor(async () => (await deliveries(w, hook.id)).find((x) => x.attempts >= 1), 10_000, 'a timed-out attempt');
    expect(d.error).toMatch(/timeout after 1000 ms/);
    expect(d.latencyMs).toBeGreaterThanOrEqual(990);
    await w.client.deleteWebhook({ id: hook.id }, ctx);
  });
});

/**
 * A connection of its own holding a row lock in an open transaction (`lockSql` locks the row),
 * and the number of the database's sessions waiting for a lock.
 */
async function holdRow(w: World, lockSql: string, params: string[]) {
  const orm = await MikroORM.init({ clientUrl: w.db.url, entities: [], discovery: { warnWhenNoEntities: false }, allowGlobalContext: true, debug: false });
  const knex = orm.em.getConnection().getKnex();
  const trx = await knex.transaction();
  await trx.raw(lockSql, params);
  return {
    async waiters(): Promise<number> {
      const res = await knex.raw<{ rows: { n: string }[] }>(
        "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      );
      return Number(res.rows[0]!.n);
    },
    async release(): Promise<void> {
      await trx.rollback().catch(() => {});
      await orm.close();
    },
  };
}

describe('a retry window that ends while a failure is recorded', () => {
  const windowMs = 600;
  let w: World;
  beforeAll(async () => {
    // No periodic look for due heads: the engine claims when told (new deliveries, a retry by
    // hand, a webhook switched on), when an outcome is recorded and when a head falls due, so
    // nothing is claimed by chance between recording a failure and switching the webhook off.
    w = await world({ WEBHOOK_RETRY_WINDOW_MS: String(windowMs), NOTIFIER_POLL_MS: '60000' });
    w.log.append({ entity_type: 'User', entity_id: admin, actor: admin, changes: { name: 'Ada', role: 'Admin' } });
    await w.start();
  });
  afterAll(async () => {
    await w?.close();
  });

  it('the delivery goes dead by the database clock; the webhook is switched off only once it is', async () => {
    receiver.modes.set('/late', 'down');
    const ctx = as(admin, 'Admin');
    const hook = (await w.client.createWebhook({ url: `${base}/late`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    // The webhook row held: the first failed attempt (a few ms into the window) is recorded by a
    // statement that waits on it until the window is over, so the time the attempt was judged
    // at and the time the webhook's failure streak is measured at fall on either side of its end.
    const held = await holdRow(w, 'select 1 from notifier.webhook where id = ? for no key update', [hook.id]);
    let event;
    try {
      event = w.log.append({ entity_type: 'Shot', actor: artist, changes: { code: 'late1' } });
      await waitFor(async () => (await held.waiters()) > 0, 10_000, 'the failed attempt waiting on the webhook row');
      await sleep(windowMs + 150);
    } finally {
      await held.release();
    }
    const dead = await waitFor(async () => (await deliveries(w, hook.id, 'dead'))[0], 5000, 'the delivery dead');
    expect(dead.eventId).toBe(event.id);
    expect(dead.attempts).toBeGreaterThanOrEqual(2);
    expect(await deliveries(w, hook.id, 'pending')).toEqual([]);
    const off = await waitFor(
      async () => {
        const got = (await w.client.getWebhook({ id: hook.id }, ctx)).webhook!;
        return got.active ? null : got;
      },
      5000,
      'the webhook switched off',
    );
    expect(off.disabledAt).toBeDefined();
    const told = await waitFor(async () =>
      (await w.client.listNotifications({ unreadOnly: true, limit: 10, hiddenProjectIds: [] }, ctx)).items.find((n) => n.recordId === hook.id),
    );
    expect(told).toMatchObject({ kind: 'webhook_disabled', recordType: 'Webhook' });
  });

  it('switching a webhook off marks an attempted delivery behind its head dead once its window is over', async () => {
    receiver.modes.set('/behind', 'refuse');
    const ctx = as(admin, 'Admin');
    const hook = (await w.client.createWebhook({ url: `${base}/behind`, kind: 'webhook', entityTypes: [], actions: [] }, ctx)).webhook!;
    const [e1, e2] = [1, 2].map((i) => w.log.append({ entity_type: 'Shot', actor: artist, changes: { code: `b${i}` } }));
    const first = await waitFor(async () => (await deliveries(w, hook.id, 'dead')).find((d) => d.eventId === e1!.id), 10_000, 'the first delivery dead');
    await waitFor(async () => !(await w.client.getWebhook({ id: hook.id }, ctx)).webhook!.active, 5000, 'the webhook switched off');
    // Switched on again: the second event is attempted; then the first is retried by hand and is
    // the head again, with a fresh window, while the second waits behind it, already attempted.
    await w.client.updateWebhook({ id: hook.id, clearSecret: false, active: true }, ctx);
    await waitFor(async () => (await deliveries(w, hook.id)).some((d) => d.eventId === e2!.id && d.attempts >= 1), 5000, 'the second delivery attempted');
    await w.client.retryDelivery({ webhookId: hook.id, deliveryId: first.id }, ctx);
    // The head dies a full window after the second delivery's first attempt: the webhook is
    // switched off and the second, whose window is over as well, is dead, not left pending.
    await waitFor(async () => (await deliveries(w, hook.id, 'dead')).length === 2, 10_000, 'both deliveries dead');
    expect(await deliveries(w, hook.id, 'pending')).toEqual([]);
    expect((await w.client.getWebhook({ id: hook.id }, ctx)).webhook!.active).toBe(false);
  });
});
