import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const P = '0190a0b0-0000-7000-8000-0000000000b1';
const SHOT = '0190a0b0-0000-7000-8000-0000000000b2';
const actionCalls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.down.clear();
  gw.state.calls.length = 0;
});

describe('action routes', () => {
  it('relay list and execute with the caller, and add the launcher URI to a launch request', async () => {
    const list = await call('POST', '/actions/list', { token: 'artist-token', body: { project_id: P, entity_type: 'Shot', entity_ids: [SHOT] } });
    expect(list.status).toBe(200);
    expect(list.json.items[0].id).toBe('launch:maya');
    expect(actionCalls()[0]).toMatchObject({ method: 'listActions', req: { projectId: P, entityType: 'Shot', entityIds: [SHOT] } });
    expect(actionCalls()[0]!.ctx.principal).toMatchObject({ userId: USERS.artist.id, role: 'Artist' });

    const exec = await call('POST', '/actions/execute', {
      token: 'artist-token',
      body: { action_id: 'launch:maya', project_id: P, entity_type: 'Shot', entity_ids: [SHOT] },
    });
    expect(exec.status).toBe(200);
    expect(exec.json).toEqual({
      kind: 'launch',
      token: 'tok/en+1',
      expires_at: '2026-01-01T00:10:00.000000Z',
      uri: `reelbase-launcher://launch?server=${encodeURIComponent(gw.url)}&token=tok%2Fen%2B1`,
    });
    const uri = new URL(exec.json.uri as string);
    expect([uri.searchParams.get('server'), uri.searchParams.get('token')]).toEqual([gw.url, 'tok/en+1']);
    const hook = await call('POST', '/actions/execute', {
      token: 'artist-token',
      body: { action_id: 'publish', project_id: P, entity_type: 'Shot', entity_ids: [SHOT] },
    });
    expect(hook.json).toEqual({ kind: 'webhook', delivery_id: '0190a0b0-0000-7000-8000-0000000000a1' });
  });

  it('validate bodies strictly (422 with every problem) and ask nothing of the service then', async () => {
    const res = await call('POST', '/actions/execute', {
      token: 'artist-token',
      body: { project_id: 'nope', entity_type: 'shot', entity_ids: [], extra: 1 },
    });
    expect(res.status).toBe(422);
    expect(res.json.detail.map((d: { loc: unknown[] }) => d.loc.join('.')).sort()).toEqual(
      ['body.action_id', 'body.entity_ids', 'body.entity_type', 'body.extra', 'body.project_id'].sort(),
    );
    expect(actionCalls()).toHaveLength(0);
  });

  it('keep the custom action list to Admins (403 before the body is read)', async () => {
    for (const token of ['supervisor-token', 'artist-token', 'viewer-token']) {
      expect((await call('GET', '/actions/custom', { token })).status).toBe(403);
      expect((await call('PUT', '/actions/custom', { token, body: { bad: true } })).status).toBe(403);
    }
    expect(actionCalls()).toHaveLength(0);
    const bad = await call('PUT', '/actions/custom', {
      token: 'admin-token',
      body: {
        actions: [
          { id: 'a', label: 'A', url: 'https://u:p@h.example.com', entity_types: ['Shot'] },
          { id: 'a', label: 'B', url: 'https://h.example.com', entity_types: ['Shot'], roles: ['Boss'] },
        ],
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.detail.map((d: { loc: unknown[] }) => d.loc.join('.')).sort()).toEqual([
      'body.actions.0.url',
      'body.actions.1.id',
      'body.actions.1.roles.0',
    ]);
    const ok = await call('PUT', '/actions/custom', { token: 'admin-token', body: { actions: [] } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ actions: [] });
  });

  it('answer 401 without a token, 404 for a token the service does not know, 503 when the schema service is down', async () => {
    expect((await call('POST', '/actions/list', { body: {} })).status).toBe(401);
    const missing = await call('GET', '/actions/launch/abc', { token: 'artist-token' });
    expect(missing.status).toBe(404);
    expect(missing.json.code).toBe('not_found');
    gw.state.down.add('actions');
    expect((await call('POST', '/actions/list', { token: 'artist-token', body: { project_id: P, entity_type: 'Shot', entity_ids: [SHOT] } })).status).toBe(503);
  });
});
