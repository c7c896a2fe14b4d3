/**
 * Two notifier replicas on one database share the work: the log is applied once (no
 * notification or delivery written twice), each head is sent by one replica at a time (no
 * duplicate at the receiver without a failure), lines stay in event order, and both replicas
 * send.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@reelbase/lib-platform';
import { parseNotifierConfig } from '../src/config.js';
import { startNotifier, type RunningNotifier } from '../src/service.js';
import { as, link, Receiver, sql, waitFor, world, type World } from './helpers.js';

let w: World;
let second: RunningNotifier;
let receiver: Receiver;
let base: string;
const admin = randomUUID();

async function sent(n: RunningNotifier): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${n.httpPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('notifier_delivery_attempts_total') && l.includes('outcome="delivered"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

beforeAll(async () => {
  receiver = new Receiver();
  receiver.delayMs = 2;
  base = await receiver.start();
  w = await world({ WEBHOOK_CONCURRENCY: '3' });
  await w.start();
  second = await startNotifier(parseNotifierConfig({ ...w.env, WEBHOOK_CONCURRENCY: '3' }), createLogger('notifier', 'silent'));
});

afterAll(async () => {
  await second?.stop();
  await w?.close();
  await receiver?.close();
});

describe('two replicas', () => {
  it('apply the log once and never send one delivery from both', { timeout: 90_000 }, async () => {
    const paths = ['/r1', '/r2', '/r3', '/r4', '/r5', '/r6'];
    for (const p of paths) await w.client.createWebhook({ url: `${base}${p}`, kind: 'webhook', entityTypes: [], actions: [] }, as(admin, 'Admin'));
    const task = randomUUID();
    const artist = randomUUID();
    w.log.append({ entity_type: 'Task', entity_id: task, actor: admin, changes: { assignees: [link('User', artist)] } });
    for (let i = 0; i < 59; i++) w.log.append({ entity_type: 'Shot', actor: admin, changes: { code: `r${i}` } });
    const ids = w.log.events.map((e) => e.id);
    await waitFor(() => paths.every((p) => receiver.uniqueAt(p).length === ids.length), 60_000, 'every delivery');
    for (const p of paths)
      expect(
        receiver.uniqueAt(p).map((r) => Number(r.eventId)),
        p,
      ).toEqual(ids);
    const retried = await sql<{ n: string }>(w, 'select count(*) as n from notifier.delivery where attempts > 1');
    expect(receiver.all.length - paths.length * ids.length).toBeLessThanOrEqual(Number(retried[0]!.n));
    expect(await sql(w, "select count(*)::int as n from notifier.delivery where status = 'delivered'")).toEqual([{ n: paths.length * ids.length }]);
    expect(await sql(w, 'select count(*)::int as n from notifier.notification')).toEqual([{ n: 1 }]);
    const [a, b] = [await sent(w.notifier!), await sent(second)];
    expect(a + b).toBeGreaterThanOrEqual(paths.length * ids.length);
    expect(Math.min(a, b)).toBeGreaterThan(0);
  });
});
