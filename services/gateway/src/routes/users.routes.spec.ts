import { AppError } from '@reelbase/lib-platform';
import type { recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const ARTIST = USERS.artist.id;
const MISSING = '0190a0b0-0000-7000-8000-0000000000ff';
const SHOT = '0190a0b0-0000-7000-8000-0000000000c1';
const T = '2026-01-01T00:00:00.000000Z';

const record = (id: string, entityType: string, data: Record<string, unknown>, active = true): recordsv1.Record => ({
  id,
  entityType,
  active,
  createdAt: T,
  updatedAt: T,
  dataJson: JSON.stringify(data),
});

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
  gw.state.records.clear();
  gw.state.records.set(SHOT, record(SHOT, 'Shot', { code: 'sh010' }));
  const me = { type: 'User', id: ARTIST };
  gw.state.records.set('t1', record('t1', 'Task', { name: 'comp', assignees: [me] }));
  gw.state.records.set('t2', record('t2', 'Task', { name: 'roto', assignees: [{ type: 'User', id: USERS.viewer.id }] }));
  gw.state.records.set('l1', record('l1', 'TimeLog', { user: me, date: '2026-03-01', minutes: 90 }));
  gw.state.records.set('l2', record('l2', 'TimeLog', { user: me, date: '2026-03-31', minutes: 30 }));
  gw.state.records.set('l3', record('l3', 'TimeLog', { user: me, date: '2026-04-01', minutes: 600 }));
  gw.state.records.set('n1', record('n1', 'Note', { subject: 'a', links: [{ type: 'Shot', id: SHOT }] }));
  gw.state.records.set('n2', record('n2', 'Note', { subject: 'b', links: [{ type: 'Shot', id: MISSING }] }));
});

const MARCH = 'from=2026-03-01&to=2026-03-31';
const records = () => gw.state.calls.filter((c) => c.method !== 'authenticate').map((c) => c.method);

describe('GET /users/{id}/tasks and /timesheet: who may read', () => {
  const may = [
    ['the user themself', 'artist-token'],
    ['the user by API key', 'svc_artist'],
    ['an Admin', 'admin-token'],
    ['a Supervisor', 'supervisor-token'],
    ['a Coordinator', 'coordinator-token'],
  ] as const;
  it.each(may)('%s may', async (_who, token) => {
    const tasks = await call('GET', `/users/${ARTIST}/tasks`, { token });
    expect(tasks.status).toBe(200);
    expect(tasks.json.items.map((t: { id: string }) => t.id)).toEqual(['t1']);
    const sheet = await call('GET', `/users/${ARTIST}/timesheet?${MARCH}`, { token });
    expect(sheet.status).toBe(200);
    expect(sheet.json.items.map((t: { id: string }) => t.id)).toEqual(['l1', 'l2']);
    expect(sheet.json.total_minutes).toBe(120);
    expect(Object.keys(sheet.json).sort()).toEqual(['items', 'total_minutes']);
    expect(gw.state.calls.find((c) => c.method === 'getTimesheet')!.req).toEqual({ userId: ARTIST, from: '2026-03-01', to: '2026-03-31' });
  });

  const mayNot = [
    ['an Artist reading another user', 'artist-token', USERS.viewer.id],
    ['a Viewer reading another user', 'viewer-token', ARTIST],
  ] as const;
  it.each(mayNot)('%s: 403, and records is not called', async (_who, token, id) => {
    for (const path of [`/users/${id}/tasks`, `/users/${id}/timesheet?${MARCH}`]) {
      const r = await call('GET', path, { token });
      expect(r.status, path).toBe(403);
      expect(r.json).toEqual({ detail: expect.stringContaining('Supervisor'), code: 'forbidden' });
    }
    expect(records()).toEqual([]);
  });

  it('a Viewer reads their own tasks', async () => {
    const r = await call('GET', `/users/${USERS.viewer.id}/tasks`, { token: 'viewer-token' });
    expect(r.status).toBe(200);
    expect(r.json.items.map((t: { id: string }) => t.id)).toEqual(['t2']);
  });

  it('the own id in upper case is still the user themself', async () => {
    const r = await call('GET', `/users/${ARTIST.toUpperCase()}/tasks`, { token: 'artist-token' });
    expect(r.status).toBe(200);
    expect(gw.state.calls.find((c) => c.method === 'listUserTasks')!.req).toEqual({ userId: ARTIST });
  });

  it('no token: 401 before anything else', async () => {
    expect((await call('GET', `/users/${ARTIST}/tasks`)).status).toBe(401);
    expect((await call('GET', `/users/${ARTIST}/timesheet?from=bad`)).status).toBe(401);
  });

  it('403 comes before 422: a bad query or id from a caller who may not read is 403', async () => {
    expect((await call('GET', `/users/${ARTIST}/timesheet?from=nope`, { token: 'viewer-token' })).status).toBe(403);
    expect((await call('GET', '/users/not-a-uuid/tasks', { token: 'artist-token' })).status).toBe(403);
    expect(records()).toEqual([]);
  });

  it('an unknown or retired user: 404 (after validation)', async () => {
    const r = await call('GET', `/users/${MISSING}/tasks`, { token: 'admin-token' });
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('not_found');
    expect((await call('GET', `/users/${MISSING}/timesheet?${MARCH}`, { token: 'coordinator-token' })).status).toBe(404);
    expect((await call('GET', `/users/${MISSING}/timesheet?from=2026-03-02&to=2026-03-01`, { token: 'admin-token' })).status).toBe(422);
  });
});

describe('GET /users/{id}/timesheet: the range', () => {
  const sheet = (q: string) => call('GET', `/users/${ARTIST}/timesheet${q}`, { token: 'artist-token' });

  it('both ends are included', async () => {
    const r = await sheet('?from=2026-03-31&to=2026-04-01');
    expect(r.json.items.map((t: { id: string }) => t.id)).toEqual(['l2', 'l3']);
    expect(r.json.total_minutes).toBe(630);
    const one = await sheet('?from=2026-04-01&to=2026-04-01');
    expect(one.json).toMatchObject({ total_minutes: 600 });
  });

  it.each([
    [
      'missing both',
      '',
      [
        ['query', 'from'],
        ['query', 'to'],
      ],
    ],
    ['missing to', '?from=2026-03-01', [['query', 'to']]],
    ['malformed from', '?from=03/01/2026&to=2026-03-31', [['query', 'from']]],
    ['no such day', '?from=2026-02-30&to=2026-03-31', [['query', 'from']]],
    ['no such month', '?from=2026-03-01&to=2026-13-01', [['query', 'to']]],
    ['from after to', '?from=2026-04-01&to=2026-03-31', [['query', 'from']]],
    ['longer than 366 days', '?from=2026-01-01&to=2027-01-02', [['query', 'from']]],
    ['an unknown parameter', `?${MARCH}&user=x`, [['query', 'user']]],
  ])('%s: 422 located in the query, records not called', async (_what, q, locs) => {
    const r = await sheet(q);
    expect(r.status).toBe(422);
    expect(r.json.detail.map((d: { loc: unknown }) => d.loc)).toEqual(locs);
    expect(records()).toEqual([]);
  });

  it('366 days (a leap year) is allowed', async () => {
    expect((await sheet('?from=2028-01-01&to=2028-12-31')).status).toBe(200);
  });
});

describe('GET /entities/{entity_type}/{record_id}/notes', () => {
  it('lists the notes that link the record, for any role', async () => {
    for (const token of ['viewer-token', 'artist-token', 'admin-token']) {
      const r = await call('GET', `/entities/Shot/${SHOT}/notes`, { token });
      expect(r.status).toBe(200);
      expect(r.json.items.map((n: { id: string }) => n.id)).toEqual(['n1']);
      expect(r.json.items[0]).toMatchObject({ entity_type: 'Note', data: { subject: 'a' } });
    }
    expect(gw.state.calls.find((c) => c.method === 'listNotes')!.req).toEqual({ entityType: 'Shot', recordId: SHOT });
  });

  it('a missing record or a record of another type: 404; a malformed id: 422; no token: 401', async () => {
    expect((await call('GET', `/entities/Shot/${MISSING}/notes`, { token: 'viewer-token' })).status).toBe(404);
    expect((await call('GET', `/entities/Asset/${SHOT}/notes`, { token: 'viewer-token' })).status).toBe(404);
    const bad = await call('GET', '/entities/Shot/nope/notes', { token: 'viewer-token' });
    expect(bad.status).toBe(422);
    expect(bad.json.detail[0].loc).toEqual(['path', 'record_id']);
    expect((await call('GET', `/entities/Shot/${SHOT}/notes`)).status).toBe(401);
  });

  it('an answer records refuses as too large: 413 payload_too_large', async () => {
    gw.state.failNext.set('listNotes', new AppError('too_large', 'the answer would exceed 12288 KiB'));
    const r = await call('GET', `/entities/Shot/${SHOT}/notes`, { token: 'viewer-token' });
    expect(r.status).toBe(413);
    expect(r.json).toEqual({ detail: expect.stringContaining('12288 KiB'), code: 'payload_too_large' });
  });

  it('records down: 503', async () => {
    gw.state.down.add('records');
    expect((await call('GET', `/entities/Shot/${SHOT}/notes`, { token: 'viewer-token' })).status).toBe(503);
  });
});
