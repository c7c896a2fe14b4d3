/**
 * Webhook management and the address checks, with private targets refused (the default):
 * Admin only, the secret never returned, 404s, problems at ["url"] for loopback, private and
 * malformed targets; and a target that is private when the delivery is attempted is never
 * contacted (checked on the address actually connected to).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appErrorOf } from '@reelbase/lib-testkit';
import { HttpSender } from '../src/delivery/http.sender.js';
import { as, Receiver, sql, waitFor, world, type World } from './helpers.js';

const admin = randomUUID();
let w: World;
let receiver: Receiver;
let base: string;
const ctx = () => as(admin, 'Admin');

beforeAll(async () => {
  receiver = new Receiver();
  base = await receiver.start();
  w = await world({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
  await w.start();
});

afterAll(async () => {
  await w?.close();
  await receiver?.close();
});

describe('webhooks', () => {
  it('are for Admins only', async () => {
    for (const role of ['Supervisor', 'Artist', 'Viewer'] as const) {
      expect((await appErrorOf(w.client.listWebhooks({}, as(randomUUID(), role)))).kind).toBe('forbidden');
    }
    const guest = { requestId: 'r', principal: { userId: '', role: 'Guest' as const, authKind: 'guest' as const } };
    expect((await appErrorOf(w.client.createWebhook({ url: 'https://example.com/', kind: 'webhook', entityTypes: [], actions: [] }, guest))).kind).toBe(
      'forbidden',
    );
  });

  it('refuse loopback, private and malformed targets with a problem at url, and every other problem at once', async () => {
    const bad = [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/hook',
      'http://192.168.0.10/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[fd00::1]/hook',
      'http://0.0.0.0/',
      'ftp://example.com/hook',
      'https://user:pass@example.com/hook',
      'not a url',
    ];
    for (const url of bad) {
      const err = await appErrorOf(w.client.createWebhook({ url, kind: 'webhook', entityTypes: [], actions: [] }, ctx()));
      expect(err.kind, url).toBe('invalid');
      expect(
        err.problems.map((p) => p.loc),
        url,
      ).toEqual([['url']]);
    }
    const many = await appErrorOf(
      w.client.createWebhook({ url: 'http://127.0.0.1/', kind: 'slack', entityTypes: ['shot'], actions: ['create', 'archive'] }, ctx()),
    );
    expect(many.problems.map((p) => p.loc)).toEqual([['url'], ['kind'], ['entity_types', 0], ['actions', 1]]);
    expect(await sql(w, 'select * from notifier.webhook')).toEqual([]);
  });

  it('are created, read, changed and deleted; the secret is never returned', async () => {
    // An IP literal on a public address needs no DNS.
    const created = (
      await w.client.createWebhook(
        {
          url: 'https://93.184.216.34/in',
          kind: 'webhook',
          secret: 'sh-secret-0123456789',
          entityTypes: ['Shot', 'Shot', 'Schema.Status'],
          actions: ['create'],
          active: false,
        },
        ctx(),
      )
    ).webhook!;
    expect(created).toMatchObject({
      kind: 'webhook',
      hasSecret: true,
      entityTypes: ['Shot', 'Schema.Status'],
      actions: ['create'],
      active: false,
      createdBy: admin,
    });
    expect(JSON.stringify(await w.client.listWebhooks({}, ctx()))).not.toContain('sh-secret');
    const changed = (await w.client.updateWebhook({ id: created.id, clearSecret: true, actions: { values: [] }, active: true }, ctx())).webhook!;
    expect(changed).toMatchObject({ hasSecret: false, actions: [], entityTypes: ['Shot', 'Schema.Status'], active: true });
    const refused = await appErrorOf(w.client.updateWebhook({ id: created.id, url: 'http://10.0.0.1/', clearSecret: false }, ctx()));
    expect(refused.problems.map((p) => p.loc)).toEqual([['url']]);
    expect((await appErrorOf(w.client.getWebhook({ id: randomUUID() }, ctx()))).kind).toBe('not_found');
    expect((await appErrorOf(w.client.updateWebhook({ id: randomUUID(), clearSecret: false }, ctx()))).kind).toBe('not_found');
    expect((await appErrorOf(w.client.listDeliveries({ webhookId: randomUUID(), limit: 10 }, ctx()))).kind).toBe('not_found');
    await w.client.deleteWebhook({ id: created.id }, ctx());
    expect((await appErrorOf(w.client.deleteWebhook({ id: created.id }, ctx()))).kind).toBe('not_found');
  });

  it('a target that is private at delivery time is never contacted', async () => {
    // Stored as if it had passed the check at creation (a name that later resolves to loopback).
    const id = randomUUID();
    await sql(w, `insert into notifier.webhook (id, url, kind) values (?, ?, 'webhook')`, [id, `http://localhost:${receiver.port}/private`]);
    w.log.append({ entity_type: 'Shot', changes: { code: 'p1' } });
    const d = await waitFor(
      async () => (await w.client.listDeliveries({ webhookId: id, limit: 5 }, ctx())).items.find((x) => x.attempts > 0),
      10_000,
      'an attempt',
    );
    expect(d.error).toMatch(/^blocked: localhost resolves to (127\.0\.0\.1|::1) is loopback/);
    expect(d.statusCode).toBeUndefined();
    expect(receiver.all.filter((r) => r.path === '/private')).toEqual([]);
  });
});

describe('the sender’s address check', () => {
  it('refuses IP literals and names resolving to private addresses unless allowed', async () => {
    const strict = new HttpSender({ allowPrivate: false, timeoutMs: 1000, userAgent: 't' });
    const open = new HttpSender({ allowPrivate: true, timeoutMs: 1000, userAgent: 't' });
    try {
      for (const url of [`http://127.0.0.1:${receiver.port}/s`, `http://localhost:${receiver.port}/s`, `http://[::ffff:127.0.0.1]:${receiver.port}/s`]) {
        const out = await strict.send(url, {}, '{}');
        expect(out, url).toMatchObject({ blocked: true, statusCode: null });
      }
      expect(receiver.all.filter((r) => r.path === '/s')).toEqual([]);
      expect(await open.send(`${base}/s`, { 'x-event-id': '1' }, '{}')).toMatchObject({ blocked: false, statusCode: 200, response: 'ok' });
      expect(receiver.all.filter((r) => r.path === '/s')).toHaveLength(1);
    } finally {
      strict.close();
      open.close();
    }
  });

  it('keeps only the first 2 KiB of an answer, storable text, and does not follow redirects', async () => {
    const http = await import('node:http');
    const srv = http.createServer((req, res) => {
      if (req.url === '/redirect') res.writeHead(302, { location: '/big' }).end();
      else if (req.url === '/binary') res.writeHead(200).end(Buffer.from([0x6f, 0x00, 0x6b, 0x00]));
      else res.writeHead(200).end('x'.repeat(10_000));
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const port = (srv.address() as { port: number }).port;
    const open = new HttpSender({ allowPrivate: true, timeoutMs: 1000, userAgent: 't' });
    try {
      const big = await open.send(`http://127.0.0.1:${port}/big`, {}, '{}');
      expect(big.response).toHaveLength(2048);
      expect(await open.send(`http://127.0.0.1:${port}/redirect`, {}, '{}')).toMatchObject({ statusCode: 302 });
      expect(await open.send(`http://127.0.0.1:${port}/binary`, {}, '{}')).toMatchObject({ statusCode: 200, response: 'ok' });
    } finally {
      open.close();
      srv.closeAllConnections();
      srv.close();
    }
  });
});
