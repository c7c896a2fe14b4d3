/**
 * Deliveries of webhook actions (docs/notifier.md, "Action deliveries") against a real local
 * HTTP target: queued by the schema service only, answered at once, sent by the delivery engine
 * signed with the action's secret, retried after a 500 with the same body and signature, the
 * secret sealed at rest; a delivery that outlives the retry window is dead and switches nothing off.
 */
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { viaService, type CallContext } from '@reelbase/lib-platform';
import { as, sql, waitFor, world, type World } from './helpers.js';

interface Hit {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Answers 500 to the first `failFirst` requests per path, then 200. */
class FlakyReceiver {
  readonly hits: Hit[] = [];
  readonly failFirst = new Map<string, number>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      this.hits.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const left = this.failFirst.get(path) ?? 0;
      if (left > 0) {
        this.failFirst.set(path, left - 1);
        res.writeHead(500).end('boom');
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  at(path: string): Hit[] {
    return this.hits.filter((h) => h.path === path);
  }
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const user = randomUUID();
/** The schema service relaying a user's execute. */
const fromSchema = (): CallContext => viaService(as(user, 'Artist'), 'schema');

let w: World;
let receiver: FlakyReceiver;
let base: string;

beforeAll(async () => {
  receiver = new FlakyReceiver();
  base = await receiver.start();
  w = await world({ WEBHOOK_RETRY_WINDOW_MS: '1500' });
  await w.start();
});

afterAll(async () => {
  await w?.close();
  await receiver?.close();
});

describe('action deliveries', () => {
  it('are queued only by the schema service, with a valid id, URL and JSON body', async () => {
    const ok = { deliveryId: randomUUID(), actionId: 'publish', url: `${base}/x`, bodyJson: '{}' };
    await expect(w.client.enqueueActionDelivery(ok, as(user, 'Admin'))).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(
      w.client.enqueueActionDelivery({ deliveryId: 'nope', actionId: 'publish', url: 'ftp://x', bodyJson: '{' }, fromSchema()),
    ).rejects.toMatchObject({ kind: 'invalid' });
    expect(await sql(w, 'select * from notifier.action_delivery')).toHaveLength(0);
  });

  it('are sent signed, retried after a 500 with the same bytes, and recorded delivered', async () => {
    receiver.failFirst.set('/hook', 1);
    const deliveryId = randomUUID();
    const secret = 'action-secret-0123456789';
    const body = JSON.stringify({ action_id: 'publish', user: { id: user, name: 'Ana' }, entity_ids: [randomUUID()] });
    const started = Date.now();
    const out = await w.client.enqueueActionDelivery({ deliveryId, actionId: 'publish', url: `${base}/hook`, secret, bodyJson: body }, fromSchema());
    expect(out.deliveryId).toBe(deliveryId);
    // Answered before any attempt could finish: the request never waits for the target.
    expect(Date.now() - started).toBeLessThan(1000);

    // The secret is sealed at rest.
    const [stored] = await sql<{ secret: string }>(w, 'select secret from notifier.action_delivery where id = ?', [deliveryId]);
    expect(stored!.secret).not.toContain(secret);

    const hits = await waitFor(() => (receiver.at('/hook').length >= 2 ? receiver.at('/hook') : null), 10_000, 'the retry');
    const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    for (const h of hits) {
      expect(h.body).toBe(body);
      expect(h.headers['x-signature']).toBe(expected);
      expect(h.headers['x-delivery-id']).toBe(deliveryId);
      expect(h.headers['x-action-id']).toBe('publish');
      expect(h.headers['x-webhook-id']).toBeUndefined();
      expect(h.headers['content-type']).toBe('application/json');
    }
    const row = await waitFor(async () => {
      const [r] = await sql<{ status: string; attempts: number; status_code: number }>(
        w,
        'select status, attempts, status_code from notifier.action_delivery where id = ?',
        [deliveryId],
      );
      return r?.status === 'delivered' ? r : null;
    });
    expect(row).toMatchObject({ attempts: 2, status_code: 200 });

    // Queuing the same id again sends nothing more.
    await w.client.enqueueActionDelivery({ deliveryId, actionId: 'publish', url: `${base}/hook`, secret, bodyJson: body }, fromSchema());
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/hook')).toHaveLength(2);
  });

  it('an unsigned delivery whose target keeps failing is dead once the retry window is over', async () => {
    receiver.failFirst.set('/down', 1_000_000);
    const deliveryId = randomUUID();
    await w.client.enqueueActionDelivery({ deliveryId, actionId: 'notify', url: `${base}/down`, bodyJson: '{"a":1}' }, fromSchema());
    const row = await waitFor(
      async () => {
        const [r] = await sql<{ status: string; attempts: number }>(w, 'select status, attempts from notifier.action_delivery where id = ?', [deliveryId]);
        return r?.status === 'dead' ? r : null;
      },
      15_000,
      'the delivery to die',
    );
    expect(row.attempts).toBeGreaterThan(1);
    expect(receiver.at('/down')[0]!.headers['x-signature']).toBeUndefined();
  });
});
