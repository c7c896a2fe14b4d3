/**
 * Notifications and webhooks against the whole stack (docs/notifier.md, docs/api-notes.md):
 * the three notification rules written through the API, own notifications only; webhook
 * management (Admin only, 422 located, 404); delivery to a real local HTTP target that is down
 * and then up (every event once per X-Event-Id, in order, signed), chat messages, a hanging
 * target that never holds up a write, a dead delivery retried by hand, and the
 * address guard as `npm start` runs it. Time is compressed through the notifier's settings.
 */
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

/** Retry settings of the stack: short backoff, a window long enough for a target that is down a moment. */
const NOTIFIER_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_BACKOFF_BASE_MS: '50',
  WEBHOOK_BACKOFF_MAX_MS: '400',
  WEBHOOK_RETRY_WINDOW_MS: '120000',
  WEBHOOK_TIMEOUT_MS: '1500',
  NOTIFIER_POLL_MS: '200',
};

const SECRET = 'a-webhook-secret-of-32-characters';

describe('notifier (whole stack)', () => {
  let e: E2EStack;
  let rx: WebhookReceiver;
  let admin: Session;
  let ana: Session;
  let bo: Session;
  let projectId: string;
  let shot: any;
  const link = (r: any) => ({ type: r.entity_type, id: r.id });
  const user = (s: Session) => ({ type: 'User', id: s.user.id });
  const create = async (api: Api, type: string, body: unknown) => expectStatus(await api.post(`/entities/${type}`, body), 200, `create ${type}`);
  const notifications = async (s: Session, query = '') => expectStatus(await s.api.get(`/notifications${query}`), 200, 'GET /notifications').items as any[];
  /** Waits until `s` has a notification matching `pred`. */
  const notified = (s: Session, pred: (n: any) => boolean, what: string) =>
    eventually(async () => (await notifications(s)).find(pred), 20_000, `${s.user.data?.email ?? 'user'}: ${what}`);
  const webhook = async (body: Record<string, unknown>) => expectStatus(await admin.api.post('/webhooks', body), 200, 'POST /webhooks');

  beforeAll(async () => {
    rx = await startWebhookReceiver({ keepBodies: true });
    e = await startE2EStack('notifier', { notifier: NOTIFIER_ENV });
    admin = await bootstrapAdmin(e.api);
    ana = await createUser(admin.api, 'Artist', 'ana@studio.test');
    bo = await createUser(admin.api, 'Artist', 'bo@studio.test');
    projectId = (await create(admin.api, 'Project', { data: { name: 'Notify', code: 'notify' } })).id;
    shot = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh010' } });
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
    await rx?.close();
  });

  describe('notifications', () => {
    it('assigned, note and reply, never for your own write, each user only their own', async () => {
      // assigned: a Task whose assignees gain ana (Admin writes it).
      const task = await create(admin.api, 'Task', { project_id: projectId, data: { name: 'Comp', entity: link(shot), assignees: [user(ana)] } });
      const assigned = await notified(ana, (n) => n.kind === 'assigned' && n.record.id === task.id, 'assigned');
      const taskEvent = (await eventsAfter(admin.api, 0, '&entity_type=Task')).find((ev) => ev.entity_id === task.id && ev.action === 'create');
      expect(assigned).toEqual({
        id: expect.any(String),
        kind: 'assigned',
        record: { type: 'Task', id: task.id },
        event_id: taskEvent.id,
        actor: admin.user.id,
        created_at: expect.any(String),
        read_at: null,
      });
      // Adding bo later notifies bo only (ana was already assigned); bo adding himself is his own action.
      expectStatus(await admin.api.patch(`/entities/Task/${task.id}`, { data: { assignees: [user(ana), user(bo)] } }), 200, 'assign bo');
      await notified(bo, (n) => n.kind === 'assigned' && n.record.id === task.id, 'bo assigned');
      const own = await create(bo.api, 'Task', { project_id: projectId, data: { name: 'Roto', entity: link(shot), assignees: [user(bo)] } });

      // note: a Note linking the Task notifies its assignees but not the author of the note.
      const note = await create(bo.api, 'Note', {
        project_id: projectId,
        data: { subject: 'edges', links: [link(task)], author: user(bo) },
      });
      await notified(ana, (n) => n.kind === 'note' && n.record.id === note.id, 'note');
      // reply: ana replies to bo's note; bo is told (and, assigned to the Task, nothing else about his own note).
      const reply = await create(ana.api, 'Note', {
        project_id: projectId,
        data: { subject: 'fixed', reply_to: link(note), author: user(ana) },
      });
      await notified(bo, (n) => n.kind === 'reply' && n.record.id === reply.id, 'reply');

      // The log is applied in order: with the reply (the last write) applied, so is everything before it.
      const anaItems = await notifications(ana);
      const boItems = await notifications(bo);
      expect(anaItems.map((n) => n.kind).sort()).toEqual(['assigned', 'note']);
      expect(boItems.map((n) => n.kind).sort()).toEqual(['assigned', 'reply']);
      expect(boItems.some((n) => n.record.id === own.id || n.record.id === note.id)).toBe(false);
      expect(anaItems.some((n) => n.record.id === reply.id)).toBe(false);
      // Newest first.
      expect(anaItems.map((n) => n.event_id)).toEqual([...anaItems.map((n) => n.event_id)].sort((a, b) => b - a));
      expect(await notifications(admin)).toEqual([]);
    });

    it('read one (another user’s is 404), unread_only, read-all, pages', async () => {
      const [first, second] = await notifications(ana);
      expectError(await bo.api.post(`/notifications/${first.id}/read`), 404, 'not_found');
      expectError(await ana.api.post('/notifications/0190a0b0-0000-7000-8000-0000000000ff/read'), 404, 'not_found');
      expectValidation(await ana.api.post('/notifications/nope/read'), ['path', 'id']);
      const read = expectStatus(await ana.api.post(`/notifications/${first.id}/read`), 200, 'read');
      expect(read.id).toBe(first.id);
      expect(typeof read.read_at).toBe('string');
      // Again: the first read_at stays.
      expect(expectStatus(await ana.api.post(`/notifications/${first.id}/read`), 200).read_at).toBe(read.read_at);
      expect((await notifications(ana, '?unread_only=true')).map((n) => n.id)).toEqual([second.id]);
      const page = expectStatus(await ana.api.get('/notifications?limit=1'), 200);
      expect(page.items.map((n: any) => n.id)).toEqual([first.id]);
      expect(typeof page.next_cursor).toBe('string');
      const rest = expectStatus(await ana.api.get(`/notifications?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`), 200);
      expect(rest.items.map((n: any) => n.id)).toEqual([second.id]);
      expect(expectStatus(await ana.api.post('/notifications/read-all'), 200)).toEqual({ count: 1 });
      expect(await notifications(ana, '?unread_only=true')).toEqual([]);
      // bo's are untouched by ana's read-all.
      expect((await notifications(bo, '?unread_only=true')).length).toBe(2);
      expectValidation(await ana.api.get('/notifications?limit=0'), ['query', 'limit']);
      expectValidation(await ana.api.get('/notifications?unread_only=maybe'), ['query', 'unread_only']);
      expectError(await e.api.get('/notifications'), 401, 'unauthenticated');
    });
  });

  describe('webhook management', () => {
    it('Admin only (403 before validation), 422 located, 404 for unknown ids, the secret never returned', async () => {
      for (const s of [ana, bo]) {
        expectError(await s.api.post('/webhooks', { url: 'nope' }), 403, 'forbidden');
        expectError(await s.api.get('/webhooks'), 403, 'forbidden');
      }
      const bad = await admin.api.post('/webhooks', { url: 'ftp://example.com/x', kind: 'sms', actions: ['rename'], extra: 1 });
      for (const loc of [
        ['body', 'url'],
        ['body', 'kind'],
        ['body', 'actions', 0],
        ['body', 'extra'],
      ])
        expectValidation(bad, loc);
      const w = await webhook({ url: rx.target('crud'), kind: 'webhook', secret: SECRET, entity_types: ['Asset'], active: false });
      expect(w).toMatchObject({
        url: rx.target('crud'),
        kind: 'webhook',
        has_secret: true,
        entity_types: ['Asset'],
        actions: [],
        active: false,
        created_by: admin.user.id,
      });
      const list = await admin.api.get('/webhooks');
      expect(list.text).not.toContain(SECRET);
      expect(expectStatus(list, 200).items.map((x: any) => x.id)).toContain(w.id);
      const patched = expectStatus(await admin.api.patch(`/webhooks/${w.id}`, { secret: null, actions: ['delete'] }), 200, 'PATCH');
      expect(patched).toMatchObject({ has_secret: false, actions: ['delete'], entity_types: ['Asset'], active: false });
      expect(expectStatus(await admin.api.get(`/webhooks/${w.id}`), 200)).toEqual(patched);
      const missing = '0190a0b0-0000-7000-8000-0000000000ff';
      expectError(await admin.api.get(`/webhooks/${missing}`), 404, 'not_found');
      expectError(await admin.api.patch(`/webhooks/${missing}`, { active: true }), 404, 'not_found');
      expectError(await admin.api.get(`/webhooks/${missing}/deliveries`), 404, 'not_found');
      expectError(await admin.api.post(`/webhooks/${w.id}/deliveries/${missing}/retry`), 404, 'not_found');
      expectValidation(await admin.api.get(`/webhooks/${w.id}/deliveries?status=lost`), ['query', 'status']);
      expect(expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200)).toEqual({ id: w.id, deleted: true });
      expectError(await admin.api.delete(`/webhooks/${w.id}`), 404, 'not_found');
    });
  });

  describe('delivery', () => {
    it('a target down, then up: every event once per X-Event-Id, in order, signed; the deliveries list says so', async () => {
      const w = await webhook({ url: rx.target('main'), kind: 'webhook', secret: SECRET, entity_types: ['Shot'] });
      await rx.down();
      const shots: any[] = [];
      try {
        for (let i = 0; i < 12; i++) {
          const s = shots[i % 3] ?? (shots[i] = await create(admin.api, 'Shot', { project_id: projectId, data: { code: `dn${i}` } }));
          if (i >= 3) expectStatus(await admin.api.patch(`/entities/Shot/${s.id}`, { data: { description: `take ${i}` } }), 200, 'patch');
        }
        // Not a Shot: filtered out.
        await create(admin.api, 'Asset', { project_id: projectId, data: { code: 'prop' } });
        // The notifier keeps trying while the target is down.
        await eventually(
          async () => {
            const d = expectStatus(await admin.api.get(`/webhooks/${w.id}/deliveries?status=pending`), 200).items as any[];
            return d.some((x) => x.attempts >= 2 && x.error) ? true : undefined;
          },
          15_000,
          'retried attempts while the target is down',
        );
      } finally {
        await rx.up();
      }
      const ids = shots.map((s) => s.id);
      const expected = (await eventsAfter(admin.api, 0, '&entity_type=Shot')).filter((ev) => ids.includes(ev.entity_id));
      expect(expected).toHaveLength(12);
      await rx.waitFor(() => rx.unique('main').length >= expected.length, 30_000, 'every event at the target');
      // In event order, each once as a de-duplicating receiver counts it.
      expect(rx.unique('main')).toEqual(expected.map((ev) => ev.id));
      for (const r of rx.delivered('main')) {
        expect(verifySignature(SECRET, r.body, r.headers['x-signature'])).toBe(true);
        expect(verifySignature('another-secret-of-32-characters!!', r.body, r.headers['x-signature'])).toBe(false);
        expect(r.headers['content-type']).toMatch(/^application\/json/);
        expect(r.headers['user-agent']).toMatch(/reelbase/i);
        const body = JSON.parse(r.body);
        expect(body.id).toBe(r.eventId);
        const ev = expected.find((x) => x.id === r.eventId);
        expect(body).toEqual(ev);
      }
      const delivered = expectStatus(await admin.api.get(`/webhooks/${w.id}/deliveries?limit=200`), 200).items as any[];
      expect(delivered.map((d) => d.event_id).sort((a, b) => a - b)).toEqual(expected.map((ev) => ev.id));
      expect(delivered.every((d) => d.status === 'delivered' && d.status_code === 200 && d.delivered_at && d.latency_ms !== null)).toBe(true);
      expect(Math.max(...delivered.map((d) => d.attempts))).toBeGreaterThan(1);
      expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200);
    });

    it('the notifier killed with SIGKILL mid-delivery, writes going on, then restarted: nothing lost, in order', async () => {
      rx.setMode('crash', { kind: 'slow', ms: 150 });
      const w = await webhook({ url: rx.target('crash'), kind: 'webhook', secret: SECRET, entity_types: ['Shot'] });
      const s = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh_crash' } });
      const write = async (n: number, tag: string) => {
        for (let i = 0; i < n; i++) expectStatus(await admin.api.patch(`/entities/Shot/${s.id}`, { data: { description: `${tag} ${i}` } }), 200, 'write');
      };
      await write(20, 'before');
      await rx.waitFor(() => rx.requests('crash').length >= 4, 20_000, 'deliveries under way');
      const pid = e.stack.pid('notifier');
      await e.stack.kill('notifier', 'SIGKILL');
      expect(e.stack.pid('notifier')).toBeUndefined();
      // Writes do not need the notifier.
      await write(10, 'while down');
      const before = rx.unique('crash').length;
      await e.stack.restart('notifier');
      expect(e.stack.pid('notifier')).not.toBe(pid);
      const expected = (await eventsAfter(admin.api, 0, '&entity_type=Shot')).filter((ev) => ev.entity_id === s.id).map((ev) => ev.id);
      expect(expected).toHaveLength(31);
      expect(before).toBeLessThan(expected.length);
      await rx.waitFor(() => rx.unique('crash').length >= expected.length, 60_000, 'every event after the restart');
      expect(rx.unique('crash')).toEqual(expected);
      // At least once: only what was in flight when the process died may come twice (one per webhook, in order).
      expect(rx.duplicates('crash')).toBeLessThanOrEqual(1);
      for (const r of rx.delivered('crash')) expect(verifySignature(SECRET, r.body, r.headers['x-signature'])).toBe(true);
      expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200);
    });

    it('chat: a Slack-compatible {"text"} a person can read', async () => {
      const w = await webhook({ url: rx.target('chat'), kind: 'chat', entity_types: ['Shot'], actions: ['create'] });
      const s = await create(ana.api, 'Shot', { project_id: projectId, data: { code: 'sh_chat' } });
      await rx.waitFor(() => rx.delivered('chat').length >= 1, 20_000, 'a chat message');
      const msg = JSON.parse(rx.delivered('chat')[0]!.body);
      expect(Object.keys(msg)).toContain('text');
      expect(msg.text).toMatch(/created/);
      expect(msg.text).toMatch(/Shot/);
      expect(msg.text).toMatch(/sh_chat|ana/i);
      expect(rx.delivered('chat')[0]!.headers['x-signature']).toBeUndefined();
      expect(s.id).toBeDefined();
      expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200);
    });

    it('a target that hangs never holds up a write: writes are answered while it still holds the delivery open', async () => {
      // A delivery timeout far longer than the test: a write that waited on the target could not be
      // answered before the target let go of the delivery it holds.
      await e.stack.restart('notifier', { WEBHOOK_TIMEOUT_MS: '120000' });
      rx.setMode('hang', { kind: 'hang' });
      const w = await webhook({ url: rx.target('hang'), kind: 'webhook', entity_types: ['Shot'] });
      const target = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh_hang' } });
      await rx.waitFor(() => rx.requests('hang').length >= 1, 20_000, 'the first delivery, held open by the target');
      const held = rx.requests('hang')[0]!;
      for (let i = 0; i < 30; i++) {
        expectStatus(await admin.api.patch(`/entities/Shot/${target.id}`, { data: { description: `while held ${i}` } }), 200, 'write');
        expect(held.closedAt, `write ${i} was answered after the target let go`).toBeUndefined();
      }
      // Their events reached the log too, while the delivery is still held.
      const events = await eventually(async () => {
        const mine = (await eventsAfter(admin.api, 0, '&entity_type=Shot')).filter((ev) => ev.entity_id === target.id);
        return mine.length >= 31 ? mine : undefined;
      });
      expect(events.at(-1).changes.description).toBe('while held 29');
      expect(held.closedAt).toBeUndefined();
      // The notifier delivers one event at a time per webhook: nothing more reached the target.
      expect(rx.requests('hang')).toHaveLength(1);
      expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200);
      rx.setMode('hang', { kind: 'ok' });
      await e.stack.restart('notifier');
    }, 120_000);
  });

  describe('retry window', () => {
    it('a delivery goes dead after the window, the webhook is disabled and Admins told; a retry by hand arrives', async () => {
      await e.stack.restart('notifier', { WEBHOOK_RETRY_WINDOW_MS: '1500' });
      rx.setMode('dead', { kind: 'fail', status: 500 });
      const w = await webhook({ url: rx.target('dead'), kind: 'webhook', secret: SECRET, entity_types: ['Shot'] });
      const s = await create(admin.api, 'Shot', { project_id: projectId, data: { code: 'sh_dead' } });
      const dead = await eventually(
        // This Shot's delivery: an earlier test's Shot may still change after the webhook exists.
        async () => (expectStatus(await admin.api.get(`/webhooks/${w.id}/deliveries?status=dead`), 200).items as any[]).find((d) => d.entity_id === s.id),
        20_000,
        'a dead delivery',
      );
      expect(dead).toMatchObject({ webhook_id: w.id, entity_id: s.id, action: 'create', status: 'dead', status_code: 500 });
      expect(dead.attempts).toBeGreaterThan(1);
      expect(dead.response).toContain('failing on purpose');
      const disabled = await eventually(async () => {
        const x = expectStatus(await admin.api.get(`/webhooks/${w.id}`), 200);
        return x.disabled_at ? x : undefined;
      });
      expect(disabled.active).toBe(false);
      await notified(admin, (n) => n.kind === 'webhook_disabled' && n.record.id === w.id, 'webhook_disabled');
      expect((await notifications(ana)).some((n) => n.kind === 'webhook_disabled')).toBe(false);

      rx.setMode('dead', { kind: 'ok' });
      const retried = expectStatus(await admin.api.post(`/webhooks/${w.id}/deliveries/${dead.id}/retry`), 200, 'retry');
      expect(retried).toMatchObject({ id: dead.id, status: 'pending' });
      await rx.waitFor(() => rx.unique('dead').includes(dead.event_id), 20_000, 'the retried delivery');
      const r = rx.delivered('dead')[0]!;
      expect(verifySignature(SECRET, r.body, r.headers['x-signature'])).toBe(true);
      await eventually(async () => (expectStatus(await admin.api.get(`/webhooks/${w.id}/deliveries?status=delivered`), 200).items.length ? true : undefined));
      expectStatus(await admin.api.delete(`/webhooks/${w.id}`), 200);
    });
  });

  describe('address guard as npm start runs it', () => {
    it('loopback, private, link-local and credentialed targets are 422 on body.url', async () => {
      await e.stack.restart('notifier', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
      for (const url of [
        rx.target('x'),
        'http://localhost:8080/in',
        'http://10.1.2.3/in',
        'http://192.168.0.10/in',
        'http://169.254.169.254/latest',
        'http://[::1]:9/in',
        'http://[::ffff:127.0.0.1]/in',
      ]) {
        const res = await admin.api.post('/webhooks', { url, kind: 'webhook' });
        expectValidation(res, ['body', 'url']);
      }
      expectValidation(await admin.api.post('/webhooks', { url: 'https://user:pw@hooks.example.com/', kind: 'chat' }), ['body', 'url']);
      expect(expectStatus(await admin.api.get('/webhooks'), 200).items.map((w: any) => w.url)).not.toContain('http://10.1.2.3/in');
    });
  });
});
