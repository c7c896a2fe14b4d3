/**
 * Webhook secrets at rest (docs/notifier.md, "Target checks"): the column holds them sealed with
 * SECRETS_KEY, never in clear; secrets stored in clear by an earlier version are sealed at the
 * next start; deliveries stay signed with the secret itself; a wrong key stops the start.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretCipher } from '@reelbase/lib-platform';
import { TEST_SECRETS_KEY } from '@reelbase/lib-testkit';
import { as, Receiver, sql, waitFor, world, type World } from './helpers.js';

const admin = randomUUID();
const artist = randomUUID();
let receiver: Receiver;
let base: string;
let w: World;

beforeAll(async () => {
  receiver = new Receiver();
  base = await receiver.start();
  w = await world();
  await w.start();
});

afterAll(async () => {
  await w?.close();
  await receiver?.close();
});

const stored = async (id: string) => (await sql<{ secret: string | null }>(w, 'select secret from notifier.webhook where id = ?', [id]))[0]!.secret;
const signed = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe('webhook secrets at rest', () => {
  it('are stored sealed, for their webhook only, and never returned', async () => {
    const ctx = as(admin, 'Admin');
    const hook = (
      await w.client.createWebhook({ url: `${base}/sealed`, kind: 'webhook', secret: 'created-secret-0123456789', entityTypes: [], actions: [] }, ctx)
    ).webhook!;
    const value = (await stored(hook.id))!;
    expect(value).toMatch(/^enc:v1:[0-9a-f]{16}:/);
    expect(value).not.toContain('created-secret');
    const cipher = new SecretCipher(TEST_SECRETS_KEY);
    expect(cipher.open(value, `notifier.webhook:${hook.id}`)).toBe('created-secret-0123456789');
    expect(() => cipher.open(value, `notifier.webhook:${randomUUID()}`)).toThrow();
    expect(JSON.stringify(await w.client.listWebhooks({}, ctx))).not.toMatch(/created-secret|enc:v1/);

    await w.client.updateWebhook({ id: hook.id, secret: 'changed-secret-0123456789', clearSecret: false }, ctx);
    const changed = (await stored(hook.id))!;
    expect(changed).toMatch(/^enc:v1:/);
    expect(changed).not.toContain('changed-secret');
    const e = w.log.append({ entity_type: 'Shot', action: 'create', actor: artist, changes: { code: 'sh010' } });
    const got = await waitFor(() => receiver.uniqueAt('/sealed').find((r) => r.eventId === String(e.id)), 10_000, 'the delivery');
    expect(got.signature).toBe(signed('changed-secret-0123456789', got.body));
    await w.client.deleteWebhook({ id: hook.id }, ctx);
  });

  it('seals secrets an earlier version stored in clear at the next start, and keeps signing with them', async () => {
    const ctx = as(admin, 'Admin');
    const hook = (await w.client.createWebhook({ url: `${base}/legacy`, kind: 'webhook', secret: 'placeholder-0123456789', entityTypes: [], actions: [] }, ctx))
      .webhook!;
    await w.notifier!.stop();
    w.client.close();
    // As a version before sealing left it.
    await sql(w, 'update notifier.webhook set secret = ? where id = ?', ['legacy-plain-secret-0123', hook.id]);
    // A wrong key refuses to start rather than lose secrets...
    await expect(w.start({ SECRETS_KEY: randomBytes(32).toString('base64') })).resolves.toBeDefined();
    await w.notifier!.stop();
    w.client.close();
    // ...once there are sealed values it cannot open (the row above was sealed by that start, with that key).
    await expect(w.start()).rejects.toThrow(/neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS/);
    await sql(w, 'update notifier.webhook set secret = ? where id = ?', ['legacy-plain-secret-0123', hook.id]);
    await w.start();
    const value = (await stored(hook.id))!;
    expect(value).toMatch(/^enc:v1:/);
    expect(value).not.toContain('legacy-plain');
    const e = w.log.append({ entity_type: 'Shot', action: 'update', actor: artist, changes: { status: 'ip' } });
    const got = await waitFor(() => receiver.uniqueAt('/legacy').find((r) => r.eventId === String(e.id)), 10_000, 'the delivery');
    expect(got.signature).toBe(signed('legacy-plain-secret-0123', got.body));
  });

  it('re-seals with a new SECRETS_KEY while the old one is in SECRETS_KEY_PREVIOUS', async () => {
    const ctx = as(admin, 'Admin');
    const hook = (
      await w.client.createWebhook({ url: `${base}/rotated`, kind: 'webhook', secret: 'rotated-secret-0123456789', entityTypes: [], actions: [] }, ctx)
    ).webhook!;
    const before = (await stored(hook.id))!;
    await w.notifier!.stop();
    w.client.close();
    const next = randomBytes(32).toString('base64');
    await w.start({ SECRETS_KEY: next, SECRETS_KEY_PREVIOUS: TEST_SECRETS_KEY });
    const after = (await stored(hook.id))!;
    expect(after).not.toBe(before);
    expect(new SecretCipher(next).open(after, `notifier.webhook:${hook.id}`)).toBe('rotated-secret-0123456789');
    const e = w.log.append({ entity_type: 'Shot', action: 'update', actor: artist, changes: { status: 'fin' } });
    const got = await waitFor(() => receiver.uniqueAt('/rotated').find((r) => r.eventId === String(e.id)), 10_000, 'the delivery');
    expect(got.signature).toBe(signed('rotated-secret-0123456789', got.body));
  });
});
