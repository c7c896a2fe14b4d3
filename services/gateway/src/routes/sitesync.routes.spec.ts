/**
 * The site sync routes against a fake SiteSyncService: roles before validation, strict bodies and
 * queries with their defaults, what is sent to records and how its answers and refusals reach
 * the client.
 */
import { AppError } from '@reelbase/lib-platform';
import type { sitesyncv1 } from '@reelbase/proto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const REP = '0190a0b0-0000-7000-8000-0000000000e1';
const T = '2026-01-01T00:00:00.000000Z';
const state = (over: Partial<sitesyncv1.SiteState> = {}): sitesyncv1.SiteState => ({
  representationId: REP,
  site: 'paris',
  status: 'in_progress',
  priority: 50,
  progress: 0,
  attempts: 0,
  updatedAt: T,
  agent: 'box-1',
  leaseExpiresAt: T,
  ...over,
});

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
  gw.state.sitesyncAnswers = new Map();
  gw.state.failNext.clear();
});

describe('roles come before validation', () => {
  it('sites: Admin only; requests, claims, reports and PATCH: not Viewers; reads: anyone signed in', async () => {
    expect((await call('PUT', '/sitesync/sites/Bad Code', { token: 'supervisor-token', body: { nope: 1 } })).status).toBe(403);
    expect((await call('DELETE', '/sitesync/sites/paris', { token: 'artist-token' })).status).toBe(403);
    for (const [method, path] of [
      ['POST', '/sitesync/requests'],
      ['POST', '/sitesync/claim'],
      ['POST', `/sitesync/state/${REP}/paris`],
      ['PATCH', `/sitesync/state/${REP}/paris`],
    ] as const) {
      const r = await call(method, path, { token: 'viewer-token', body: { junk: true } });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.code).toBe('forbidden');
    }
    expect(gw.state.calls.filter((c) => c.method !== 'authenticate')).toEqual([]);
    gw.state.sitesyncAnswers = new Map<string, unknown>([
      ['listSites', { sites: [] }],
      ['listStates', { items: [] }],
      ['summarizeStates', { counts: [] }],
    ]);
    expect((await call('GET', '/sitesync/sites', { token: 'viewer-token' })).status).toBe(200);
    expect((await call('GET', '/sitesync/state', { token: 'viewer-token' })).status).toBe(200);
    expect((await call('GET', '/sitesync/summary', { token: 'viewer-token' })).status).toBe(200);
    expect((await call('GET', '/sitesync/state')).status).toBe(401);
  });
});

describe('validation', () => {
  it('every problem of a body at once, unknown keys included, before records is asked', async () => {
    const r = await call('POST', '/sitesync/claim', { token: 'svc_artist', body: { site: 'Paris', agent: '', limit: 101, lease_seconds: 5, extra: 1 } });
    expect(r.status).toBe(422);
    expect(r.json.detail.map((p: any) => p.loc.join('.')).sort()).toEqual(['body.agent', 'body.extra', 'body.lease_seconds', 'body.limit', 'body.site']);
    const q = await call('GET', '/sitesync/state?status=done&limit=0&project_id=x', { token: 'viewer-token' });
    expect(q.status).toBe(422);
    expect(q.json.detail.map((p: any) => p.loc.join('.')).sort()).toEqual(['query.limit', 'query.project_id', 'query.status']);
    const p = await call('PATCH', `/sitesync/state/not-a-uuid/paris`, { token: 'artist-token', body: { status: 'synced' } });
    expect(p.json.detail.map((x: any) => x.loc.join('.')).sort()).toEqual(['body.status', 'path.representation_id']);
    const req = await call('POST', '/sitesync/requests', { token: 'artist-token', body: { representation_ids: [], site: 'paris', priority: 101 } });
    expect(req.json.detail.map((x: any) => x.loc.join('.')).sort()).toEqual(['body.priority', 'body.representation_ids']);
    expect(gw.state.calls.filter((c) => c.method !== 'authenticate')).toEqual([]);
  });

  it("records' own refusals keep their place: an unknown representation in the body, 409 lease_lost, 404", async () => {
    gw.state.failNext.set('requestSync', AppError.invalid([{ loc: ['representation_ids', 1], msg: 'no live Representation with this id', type: 'not_found' }]));
    const r = await call('POST', '/sitesync/requests', { token: 'artist-token', body: { representation_ids: [REP, REP.replace('e1', 'e2')], site: 'paris' } });
    expect(r.status).toBe(422);
    expect(r.json.detail[0].loc).toEqual(['body', 'representation_ids', 1]);
    gw.state.failNext.set('reportState', AppError.conflict('lease_lost', 'not the current lease'));
    const lost = await call('POST', `/sitesync/state/${REP}/paris`, { token: 'svc_artist', body: { lease: 'x', status: 'synced' } });
    expect(lost.status).toBe(409);
    expect(lost.json).toEqual({ detail: 'not the current lease', code: 'lease_lost' });
  });
});

describe('calls and answers', () => {
  it('a claim sends the defaults and answers each state with its lease', async () => {
    gw.state.sitesyncAnswers!.set('claimStates', { items: [{ state: state(), lease: 'ssl_x' }] });
    const r = await call('POST', '/sitesync/claim', { token: 'svc_artist', body: { site: 'paris', agent: 'box-1' } });
    expect(r.status).toBe(200);
    expect(gw.state.calls.at(-1)!.req).toEqual({ site: 'paris', agent: 'box-1', limit: 10, leaseSeconds: 300 });
    expect(r.json).toEqual({
      items: [
        {
          representation_id: REP,
          site: 'paris',
          project_id: null,
          status: 'in_progress',
          priority: 50,
          progress: 0,
          size: null,
          total_size: null,
          attempts: 0,
          error: null,
          agent: 'box-1',
          lease_expires_at: T,
          updated_at: T,
          lease: 'ssl_x',
        },
      ],
    });
    gw.state.sitesyncAnswers!.set('claimStates', { items: [] });
    expect((await call('POST', '/sitesync/claim', { token: 'svc_artist', body: { site: 'paris', agent: 'box-1' } })).json).toEqual({ items: [] });
  });

  it('a request defaults its priority to 50, lower-cases ids; pages pass filters and their cursor; the summary lists every count', async () => {
    gw.state.sitesyncAnswers!.set('requestSync', { queued: 1, unchanged: 0 });
    const r = await call('POST', '/sitesync/requests', { token: 'artist-token', body: { representation_ids: [REP.toUpperCase()], site: 'paris' } });
    expect(r.json).toEqual({ queued: 1, unchanged: 0 });
    expect(gw.state.calls.at(-1)!.req).toEqual({ representationIds: [REP], site: 'paris', priority: 50 });

    gw.state.sitesyncAnswers!.set('listStates', { items: [state({ status: 'queued', leaseExpiresAt: undefined })], nextCursor: 'abc' });
    const page = await call('GET', '/sitesync/state?site=paris&status=queued&limit=1&cursor=xyz', { token: 'viewer-token' });
    expect(page.json.next_cursor).toBe('abc');
    expect(page.json.items[0].lease_expires_at).toBeNull();
    expect(gw.state.calls.at(-1)!.req).toMatchObject({ site: 'paris', status: 'queued', limit: 1, cursor: 'xyz' });

    const counts = ['queued', 'in_progress', 'synced', 'failed', 'paused', 'removed'].map((status, i) => ({ status, count: i }));
    gw.state.sitesyncAnswers!.set('summarizeStates', { counts });
    const sum = await call('GET', '/sitesync/summary?site=paris', { token: 'viewer-token' });
    expect(sum.json).toEqual({ counts: { queued: 0, in_progress: 1, synced: 2, failed: 3, paused: 4, removed: 5 } });
  });

  it('PUT and DELETE of a site', async () => {
    const site = { id: REP, code: 'paris', name: 'Paris', kind: 'studio', createdAt: T, updatedAt: T };
    gw.state.sitesyncAnswers!.set('putSite', { site, created: true });
    const put = await call('PUT', '/sitesync/sites/paris', { token: 'admin-token', body: { name: 'Paris', kind: 'studio' } });
    expect(put.json).toEqual({ id: REP, code: 'paris', name: 'Paris', kind: 'studio', root: null, created_at: T, updated_at: T });
    expect(gw.state.calls.at(-1)!.req).toEqual({ code: 'paris', name: 'Paris', kind: 'studio', root: undefined });
    gw.state.failNext.set('deleteSite', AppError.conflict('code_in_use', '3 sync states name site paris', { usage: 3 }));
    const del = await call('DELETE', '/sitesync/sites/paris', { token: 'admin-token' });
    expect(del.status).toBe(409);
    expect(del.json).toEqual({ detail: '3 sync states name site paris', code: 'code_in_use', usage: 3 });
  });
});
