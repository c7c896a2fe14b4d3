/**
 * Restricted projects on the HTTP paths the gateway filters itself (docs/api-notes.md,
 * "Restricted projects"): `GET /events` and the sync changes feed ask the events service to leave
 * out the caller's hidden projects, notifications ask the notifier the same, routes naming a
 * project that another service answers as itself are 404, and a Project write relayed here is in
 * force for the very next request.
 */
import { AppError, type CallContext } from '@reelbase/lib-platform';
import type { eventsv1, recordsv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, storeProject, userLink, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

const P = '0190a0b0-0000-7000-8000-0000000000c1';
const R = '0190a0b0-0000-7000-8000-0000000000c2';
const OPEN = '0190a0b0-0000-7000-8000-0000000000c3';
const T = '2026-01-01T00:00:00.000000Z';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const member = userLink;

/** The last call of `method`'s request. */
const lastReq = <Q>(method: string): Q => gw.state.calls.filter((c) => c.method === method).at(-1)!.req as Q;

beforeAll(async () => {
  gw = await startTestGateway({}, (peers, state) => {
    // P: the supervisor only; R: nobody but Admins; OPEN: everyone.
    storeProject(state, P, { restricted: true, members: [member(USERS.supervisor.id)] });
    storeProject(state, R, { restricted: true, members: [] });
    storeProject(state, OPEN, { restricted: false });
    const ev = (id: number, projectId: string | undefined): eventsv1.Event => ({
      id,
      entityType: 'Shot',
      entityId: projectId ?? OPEN,
      projectId,
      action: 'update',
      actor: USERS.admin.id,
      changesJson: '{}',
      createdAt: T,
    });
    state.events.push(ev(1, P), ev(2, OPEN), ev(3, R), ev(4, undefined), ev(5, P));
    // A batch as records runs it: here, only a Project's data merged.
    const batchRecords = async (req: recordsv1.BatchRecordsRequest, ctx: CallContext) => {
      state.calls.push({ method: 'batchRecords', req, ctx });
      const requests = JSON.parse(req.requestsJson) as { entity_type: string; entity_id: string; data: Record<string, unknown> }[];
      for (const q of requests) {
        const r = state.records.get(q.entity_id)!;
        state.records.set(r.id, { ...r, dataJson: JSON.stringify({ ...(JSON.parse(r.dataJson) as object), ...q.data }) });
      }
      return { json: JSON.stringify({ results: requests.map(() => true) }) };
    };
    const sync = { changes: async () => ({ json: '[]' }) };
    return { ...peers, records: { ...peers.records, batchRecords }, sync } as unknown as typeof peers;
  });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
});

describe('GET /events', () => {
  it('leaves out the projects the caller may not read, newest first and with after=', async () => {
    const artist = await call('GET', '/events', { token: 'artist-token' });
    expect(artist.status).toBe(200);
    expect(artist.json.items.map((e: { id: number }) => e.id)).toEqual([4, 2]);
    expect(new Set(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds)).toEqual(new Set([P, R]));
    const supervisor = await call('GET', '/events?after=0', { token: 'supervisor-token' });
    expect(supervisor.json.items.map((e: { id: number }) => e.id)).toEqual([1, 2, 4, 5]);
    const admin = await call('GET', '/events?after=0', { token: 'admin-token' });
    expect(admin.json.items.map((e: { id: number }) => e.id)).toEqual([1, 2, 3, 4, 5]);
    expect(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds).toEqual([]);
  });

  it('answers an empty list for project_id= of a hidden project, with the same filter on each cursor page', async () => {
    const hidden = await call('GET', `/events?project_id=${P}`, { token: 'svc_artist' });
    expect(hidden.status).toBe(200);
    expect(hidden.json).toEqual({ items: [], next_cursor: null });
    gw.state.eventsPageBudget = 1;
    try {
      const first = await call('GET', '/events?after=0&limit=5', { token: 'artist-token' });
      expect(first.json.items.map((e: { id: number }) => e.id)).toEqual([2]);
      const next = await call('GET', `/events?cursor=${first.json.next_cursor}&limit=5`, { token: 'artist-token' });
      expect(next.json.items.map((e: { id: number }) => e.id)).toEqual([4]);
      expect(new Set(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds)).toEqual(new Set([P, R]));
    } finally {
      gw.state.eventsPageBudget = undefined;
    }
  });

  it('sees a Project write relayed by this gateway on the very next request', async () => {
    const created = await call('POST', '/entities/Project', { token: 'admin-token', body: { data: { name: 'nda', restricted: true, members: [] } } });
    expect(created.status).toBe(200);
    await call('GET', '/events', { token: 'artist-token' });
    expect(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds).toContain(created.json.id);

    const patched = await call('PATCH', `/entities/Project/${created.json.id}`, {
      token: 'admin-token',
      body: { data: { members: [member(USERS.artist.id)] } },
    });
    expect(patched.status).toBe(200);
    await call('GET', '/events', { token: 'artist-token' });
    expect(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds).not.toContain(created.json.id);

    const batch = await call('POST', '/batch', {
      token: 'admin-token',
      body: { requests: [{ request_type: 'update', entity_type: 'Project', entity_id: created.json.id, data: { members: [] } }] },
    });
    expect(batch.status).toBe(200);
    await call('GET', '/events', { token: 'artist-token' });
    expect(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds).toContain(created.json.id);
    await call('PATCH', `/entities/Project/${created.json.id}`, { token: 'admin-token', body: { data: { restricted: false } } });
  });

  it('keeps the map as it was when a Project write fails', async () => {
    gw.state.down.add('records');
    const failed = await call('PATCH', `/entities/Project/${OPEN}`, { token: 'admin-token', body: { data: { name: 'x' } } });
    expect(failed.status).toBe(503);
    // The write failed, so nothing changed: the map stays as it was.
    expect((await call('GET', '/events', { token: 'artist-token' })).status).toBe(200);
  });
});

describe('GET /sync/changes', () => {
  it('reads the log without the projects the caller may not read', async () => {
    gw.state.events.push({ id: 6, entityType: 'Shot', entityId: P, projectId: P, action: 'update', actor: USERS.admin.id, changesJson: '{}', createdAt: T });
    const res = await call('GET', '/sync/changes?after=5', { token: 'artist-token' });
    expect(res.status).toBe(200);
    expect(res.json.items).toEqual([]);
    expect(new Set(lastReq<eventsv1.ListEventsRequest>('listEvents').hiddenProjectIds)).toEqual(new Set([P, R]));
    gw.state.events.pop();
  });
});

describe('notifications', () => {
  it('pass the hidden projects to every notification call', async () => {
    expect((await call('GET', '/notifications', { token: 'artist-token' })).status).toBe(200);
    expect(new Set(lastReq<{ hiddenProjectIds: string[] }>('listNotifications').hiddenProjectIds)).toEqual(new Set([P, R]));
    await call('POST', '/notifications/read-all', { token: 'artist-token' });
    expect(new Set(lastReq<{ hiddenProjectIds: string[] }>('markAllNotificationsRead').hiddenProjectIds)).toEqual(new Set([P, R]));
    gw.state.failNext.set('markNotificationRead', AppError.notFound('notification not found'));
    await call('POST', `/notifications/${OPEN}/read`, { token: 'supervisor-token' });
    expect(lastReq<{ hiddenProjectIds: string[] }>('markNotificationRead').hiddenProjectIds).toEqual([R]);
  });
});

describe('routes naming a project that another service answers', () => {
  it('are 404 for a restricted project the caller may not read, as for an unknown one', async () => {
    const paths = [`/schema/applications?project_id=${P}`, `/schema/tools/active?project_id=${P}`, `/addons/publish/settings?project_id=${P}`];
    for (const path of paths) {
      const before = gw.state.calls.length;
      const res = await call('GET', path, { token: 'artist-token' });
      expect(res.status, path).toBe(404);
      expect(res.json.code).toBe('not_found');
      // Nothing was asked of the service.
      expect(gw.state.calls.slice(before).filter((c) => c.method !== 'authenticate')).toEqual([]);
      expect((await call('GET', path, { token: 'supervisor-token' })).status, path).toBe(200);
      expect((await call('GET', path.replace(P, OPEN), { token: 'artist-token' })).status, path).toBe(200);
    }
    const put = await call('PUT', `/addons/publish/settings?project_id=${R}`, { token: 'supervisor-token', body: {} });
    expect(put.status).toBe(404);
    const pin = await call('PUT', `/addons/publish/pin?project_id=${R}`, { token: 'supervisor-token', body: { version: '1.0.0' } });
    expect(pin.status).toBe(404);
    expect((await call('PUT', `/addons/publish/settings?project_id=${R}`, { token: 'admin-token', body: {} })).status).toBe(200);
  });
});
