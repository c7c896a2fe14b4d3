import { AppError, newId } from '@reelbase/lib-platform';
import type { notifierv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { emptyNotifierState, startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const T = '2026-01-01T00:00:00.000000Z';
const TASK = '0190a0b0-0000-7000-8000-0000000000d1';
const MISSING = '0190a0b0-0000-7000-8000-0000000000ff';
const notifierCalls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');

function notification(userId: string, kind: string, eventId: number, readAt?: string): notifierv1.Notification {
  const n: notifierv1.Notification = { id: newId(), kind, recordType: 'Task', recordId: TASK, eventId, actor: USERS.admin.id, createdAt: T, readAt };
  gw.state.notifier.notifications.push({ userId, n });
  return n;
}

function delivery(webhookId: string, status: string): notifierv1.Delivery {
  const d: notifierv1.Delivery = {
    id: newId(),
    webhookId,
    eventId: 7,
    entityType: 'Shot',
    entityId: TASK,
    action: 'update',
    status,
    attempts: 3,
    statusCode: 500,
    latencyMs: 12,
    response: 'oops',
    error: 'HTTP 500',
    createdAt: T,
  };
  gw.state.notifier.deliveries.push(d);
  return d;
}

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
  gw.state.notifier = emptyNotifierState();
});

describe('notifications', () => {
  it('lists only the caller’s own, newest first, in the contract shape, paged', async () => {
    const a = notification(USERS.artist.id, 'assigned', 5);
    notification(USERS.viewer.id, 'note', 6);
    const b = notification(USERS.artist.id, 'reply', 7, T);
    const res = await call('GET', '/notifications', { token: 'artist-token' });
    expect(res.status).toBe(200);
    expect(res.json.items).toEqual([
      { id: b.id, kind: 'reply', record: { type: 'Task', id: TASK }, event_id: 7, actor: USERS.admin.id, created_at: T, read_at: T },
      { id: a.id, kind: 'assigned', record: { type: 'Task', id: TASK }, event_id: 5, actor: USERS.admin.id, created_at: T, read_at: null },
    ]);
    expect(res.json.next_cursor).toBeNull();
    const unread = await call('GET', '/notifications?unread_only=true&limit=1', { token: 'artist-token' });
    expect(unread.json.items.map((n: { id: string }) => n.id)).toEqual([a.id]);
    expect(notifierCalls().at(-1)?.req).toEqual({ unreadOnly: true, limit: 1, cursor: undefined, hiddenProjectIds: [] });
    const paged = await call('GET', '/notifications?limit=1', { token: 'artist-token' });
    expect(paged.json.next_cursor).toBe('1');
    const next = await call('GET', `/notifications?limit=1&cursor=${paged.json.next_cursor}`, { token: 'artist-token' });
    expect(next.json.items.map((n: { id: string }) => n.id)).toEqual([a.id]);
  });

  it('422 on bad query parameters, located in the query, before the notifier is called', async () => {
    const res = await call('GET', '/notifications?limit=0&unread_only=yes&extra=1', { token: 'artist-token' });
    expect(res.status).toBe(422);
    expect(res.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'limit'],
        ['query', 'unread_only'],
        ['query', 'extra'],
      ]),
    );
    expect(notifierCalls()).toEqual([]);
  });

  it('marks one read; another user’s notification is 404; a bad id is 422 on the path', async () => {
    const mine = notification(USERS.artist.id, 'assigned', 5);
    const theirs = notification(USERS.viewer.id, 'assigned', 6);
    const ok = await call('POST', `/notifications/${mine.id}/read`, { token: 'artist-token' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ id: mine.id, kind: 'assigned' });
    expect(typeof ok.json.read_at).toBe('string');
    expect((await call('POST', `/notifications/${theirs.id}/read`, { token: 'artist-token' })).status).toBe(404);
    const bad = await call('POST', '/notifications/nope/read', { token: 'artist-token' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['path', 'id']);
  });

  it('read-all counts the caller’s unread ones and takes no body', async () => {
    notification(USERS.artist.id, 'assigned', 5);
    notification(USERS.artist.id, 'note', 6);
    notification(USERS.viewer.id, 'note', 7);
    const res = await call('POST', '/notifications/read-all', { token: 'artist-token' });
    expect(res).toMatchObject({ status: 200, json: { count: 2 } });
    expect((await call('POST', '/notifications/read-all', { token: 'artist-token' })).json).toEqual({ count: 0 });
    const withBody = await call('POST', '/notifications/read-all', { token: 'artist-token', body: { all: true } });
    expect(withBody.status).toBe(422);
    expect(withBody.json.detail[0].loc).toEqual(['body', 'all']);
  });

  it('401 without a token; 503 while the notifier is down', async () => {
    expect((await call('GET', '/notifications')).status).toBe(401);
    gw.state.down.add('notifier');
    const res = await call('GET', '/notifications', { token: 'artist-token' });
    expect(res.status).toBe(503);
    expect(res.json.code).toBe('unavailable');
  });
});

describe('webhooks', () => {
  const body = { url: 'https://hooks.example.com/in', kind: 'webhook', secret: 's'.repeat(32), entity_types: ['Shot'], actions: ['create', 'update'] };

  it('an Admin creates one; the secret is never returned', async () => {
    const res = await call('POST', '/webhooks', { token: 'admin-token', body });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      url: body.url,
      kind: 'webhook',
      has_secret: true,
      entity_types: ['Shot'],
      actions: ['create', 'update'],
      active: true,
      disabled_at: null,
      created_by: USERS.admin.id,
    });
    expect(res.text).not.toContain(body.secret);
    expect(notifierCalls()[0]?.req).toEqual({
      url: body.url,
      kind: 'webhook',
      secret: body.secret,
      entityTypes: ['Shot'],
      actions: ['create', 'update'],
      active: undefined,
    });
    const list = await call('GET', '/webhooks', { token: 'admin-token' });
    expect(list.json.items.map((w: { id: string }) => w.id)).toEqual([res.json.id]);
    expect(list.text).not.toContain(body.secret);
    const one = await call('GET', `/webhooks/${res.json.id}`, { token: 'admin-token' });
    expect(one.json).toEqual(res.json);
  });

  it.each(['supervisor-token', 'artist-token', 'svc_artist', 'viewer-token', 'coordinator-token'])(
    '%s: 403 on every webhook route, before validation',
    async (token) => {
      const id = newId();
      const tries = [
        call('POST', '/webhooks', { token, body: { nonsense: true } }),
        call('GET', '/webhooks', { token }),
        call('GET', `/webhooks/${id}`, { token }),
        call('PATCH', '/webhooks/not-a-uuid', { token, body: { url: 42 } }),
        call('DELETE', `/webhooks/${id}`, { token }),
        call('GET', `/webhooks/${id}/deliveries?status=bogus`, { token }),
        call('POST', `/webhooks/${id}/deliveries/${id}/retry`, { token }),
      ];
      for (const res of await Promise.all(tries)) {
        expect(res.status).toBe(403);
        expect(res.json.code).toBe('forbidden');
      }
      expect(notifierCalls()).toEqual([]);
    },
  );

  it('422 for bad bodies, every problem located at once', async () => {
    const res = await call('POST', '/webhooks', {
      token: 'admin-token',
      body: { url: 'ftp://x.example.com', kind: 'email', secret: 'short', entity_types: ['not a type'], actions: ['rename'], colour: 'red' },
    });
    expect(res.status).toBe(422);
    expect(res.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'url'],
        ['body', 'kind'],
        ['body', 'secret'],
        ['body', 'entity_types', 0],
        ['body', 'actions', 0],
        ['body', 'colour'],
      ]),
    );
    const creds = await call('POST', '/webhooks', { token: 'admin-token', body: { url: 'https://u:p@hooks.example.com/', kind: 'chat' } });
    expect(creds.status).toBe(422);
    expect(creds.json.detail[0].loc).toEqual(['body', 'url']);
    const missing = await call('POST', '/webhooks', { token: 'admin-token', body: {} });
    expect(missing.json.detail.map((p: { loc: unknown[]; type: string }) => [p.loc, p.type])).toEqual(
      expect.arrayContaining([
        [['body', 'url'], 'missing'],
        [['body', 'kind'], 'missing'],
      ]),
    );
    expect(notifierCalls()).toEqual([]);
  });

  it("the notifier's refusal of a URL reaches the client at body.url", async () => {
    const res = await call('POST', '/webhooks', { token: 'admin-token', body: { url: 'http://127.0.0.1:9/in', kind: 'webhook' } });
    expect(res.status).toBe(422);
    expect(res.json.detail).toEqual([{ loc: ['body', 'url'], msg: 'the host resolves to a loopback address', type: 'value_error' }]);
  });

  it('PATCH keeps absent keys, null removes the secret, lists replace; unknown ids 404', async () => {
    const created = (await call('POST', '/webhooks', { token: 'admin-token', body })).json;
    const res = await call('PATCH', `/webhooks/${created.id}`, { token: 'admin-token', body: { secret: null, actions: [], active: false } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ url: body.url, has_secret: false, entity_types: ['Shot'], actions: [], active: false });
    expect(notifierCalls().at(-1)?.req).toMatchObject({
      id: created.id,
      clearSecret: true,
      secret: undefined,
      entityTypes: undefined,
      actions: { values: [] },
      active: false,
    });
    const bad = await call('PATCH', `/webhooks/${created.id}`, { token: 'admin-token', body: { kind: 'sms', url: null } });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'kind'],
        ['body', 'url'],
      ]),
    );
    const schemaKinds = await call('PATCH', `/webhooks/${created.id}`, { token: 'admin-token', body: { entity_types: ['Shot', 'Schema.Status'] } });
    expect(schemaKinds.json.entity_types).toEqual(['Shot', 'Schema.Status']);
    expect((await call('PATCH', `/webhooks/${MISSING}`, { token: 'admin-token', body: { active: true } })).status).toBe(404);
    expect((await call('GET', `/webhooks/${MISSING}`, { token: 'admin-token' })).status).toBe(404);
    expect((await call('DELETE', `/webhooks/${MISSING}`, { token: 'admin-token' })).status).toBe(404);
    const del = await call('DELETE', `/webhooks/${created.id}`, { token: 'admin-token' });
    expect(del).toMatchObject({ status: 200, json: { id: created.id, deleted: true } });
    expect((await call('GET', `/webhooks/${created.id}`, { token: 'admin-token' })).status).toBe(404);
  });

  it('deliveries: listed in the contract shape with a status filter, retried by id; unknown ids 404', async () => {
    const created = (await call('POST', '/webhooks', { token: 'admin-token', body })).json;
    const dead = delivery(created.id, 'dead');
    delivery(created.id, 'delivered');
    const all = await call('GET', `/webhooks/${created.id}/deliveries`, { token: 'admin-token' });
    expect(all.status).toBe(200);
    expect(all.json.items).toHaveLength(2);
    const only = await call('GET', `/webhooks/${created.id}/deliveries?status=dead`, { token: 'admin-token' });
    expect(only.json).toEqual({
      items: [
        {
          id: dead.id,
          webhook_id: created.id,
          event_id: 7,
          entity_type: 'Shot',
          entity_id: TASK,
          action: 'update',
          status: 'dead',
          attempts: 3,
          status_code: 500,
          latency_ms: 12,
          response: 'oops',
          error: 'HTTP 500',
          next_attempt_at: null,
          last_attempt_at: null,
          delivered_at: null,
          created_at: T,
        },
      ],
      next_cursor: null,
    });
    const bad = await call('GET', `/webhooks/${created.id}/deliveries?status=lost&limit=500`, { token: 'admin-token' });
    expect(bad.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual([
      ['query', 'status'],
      ['query', 'limit'],
    ]);
    const retried = await call('POST', `/webhooks/${created.id}/deliveries/${dead.id}/retry`, { token: 'admin-token' });
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ id: dead.id, status: 'pending' });
    expect((await call('POST', `/webhooks/${created.id}/deliveries/${MISSING}/retry`, { token: 'admin-token' })).status).toBe(404);
    expect((await call('GET', `/webhooks/${MISSING}/deliveries`, { token: 'admin-token' })).status).toBe(404);
    const badPath = await call('POST', `/webhooks/${created.id}/deliveries/x/retry`, { token: 'admin-token' });
    expect(badPath.json.detail[0].loc).toEqual(['path', 'delivery_id']);
  });

  it("the notifier's own refusals pass through (a role it refuses, its outage)", async () => {
    gw.state.failNext.set('listWebhooks', new AppError('forbidden', 'only an Admin may manage webhooks'));
    expect((await call('GET', '/webhooks', { token: 'admin-token' })).status).toBe(403);
    gw.state.down.add('notifier');
    expect((await call('GET', '/webhooks', { token: 'admin-token' })).status).toBe(503);
  });

  it('every route is in the OpenAPI document with its schemas', async () => {
    const doc = (await call('GET', '/openapi.json')).json;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/notifications',
        '/notifications/read-all',
        '/notifications/{id}/read',
        '/webhooks',
        '/webhooks/{id}',
        '/webhooks/{id}/deliveries',
        '/webhooks/{id}/deliveries/{delivery_id}/retry',
      ]),
    );
    expect(Object.keys(doc.paths['/webhooks/{id}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Notification', 'Webhook', 'WebhookCreate', 'WebhookPatch', 'Delivery']));
    expect(doc.components.schemas.Webhook.properties).not.toHaveProperty('secret');
  });
});
