import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from './webhook.receiver.js';

let rx: WebhookReceiver | undefined;
afterEach(async () => {
  await rx?.close();
  rx = undefined;
});

const post = (url: string, eventId: number, body = `{"id":${eventId}}`, signal?: AbortSignal) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-event-id': String(eventId) }, body, signal });

describe('webhook receiver', () => {
  it('accepts, keeps bodies and de-duplicates by X-Event-Id per target', async () => {
    rx = await startWebhookReceiver({ keepBodies: true });
    for (const id of [1, 2, 1, 3]) expect((await post(rx.target('a'), id)).status).toBe(200);
    await post(rx.target('b'), 1);
    expect(rx.unique('a')).toEqual([1, 2, 3]);
    expect(rx.duplicates('a')).toBe(1);
    expect(rx.unique('b')).toEqual([1]);
    expect(rx.requests('a').map((r) => r.body)).toEqual(['{"id":1}', '{"id":2}', '{"id":1}', '{"id":3}']);
    expect(rx.requests()).toHaveLength(5);
  });

  it('fails on demand without counting the event as received', async () => {
    rx = await startWebhookReceiver();
    rx.setMode('a', { kind: 'fail', status: 503 });
    expect((await post(rx.target('a'), 1)).status).toBe(503);
    expect(rx.unique('a')).toEqual([]);
    rx.setMode('a', { kind: 'ok' });
    expect((await post(rx.target('a'), 1)).status).toBe(200);
    expect(rx.unique('a')).toEqual([1]);
    expect(rx.requests('a').map((r) => r.answered)).toEqual([503, 200]);
  });

  it('answers slowly on demand', async () => {
    rx = await startWebhookReceiver();
    rx.setMode('a', { kind: 'slow', ms: 200 });
    const t0 = Date.now();
    expect((await post(rx.target('a'), 1)).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(180);
    expect(rx.unique('a')).toEqual([1]);
  });

  it('hangs on demand: no answer until the sender gives up', async () => {
    rx = await startWebhookReceiver();
    rx.setMode('slow', { kind: 'hang' });
    const t0 = Date.now();
    await expect(post(rx.target('slow'), 1, '{}', AbortSignal.timeout(300))).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(rx.requests('slow')[0]?.answered).toBe('hang');
  });

  it('goes down (connections refused) and comes back on the same port', async () => {
    rx = await startWebhookReceiver();
    await rx.down();
    await expect(post(rx.target('a'), 1)).rejects.toThrow();
    await rx.up();
    expect((await post(rx.target('a'), 1)).status).toBe(200);
  });

  it('verifies sha256= HMAC signatures of the raw body', () => {
    const body = '{"id":7}';
    const sig = `sha256=${createHmac('sha256', 'k'.repeat(32)).update(body).digest('hex')}`;
    expect(verifySignature('k'.repeat(32), body, sig)).toBe(true);
    expect(verifySignature('k'.repeat(31), body, sig)).toBe(false);
    expect(verifySignature('k'.repeat(32), `${body} `, sig)).toBe(false);
    expect(verifySignature('k'.repeat(32), body, undefined)).toBe(false);
    expect(verifySignature('k'.repeat(32), body, sig.slice(7))).toBe(false);
  });
});
