/**
 * Agent API keys at the gateway (docs/api-notes.md, "Authentication"): a key created with
 * `"scope": "agent"` calls only the routes marked `agent` (the farm and sitesync agent routes);
 * every other authenticated route answers it 403 `forbidden` after 401 and 429 and before the
 * body is looked at, the WebSocket closes 1008, and on its routes its scope and pools reach the
 * services in the signed principal.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { recordsv1 } from '@reelbase/proto';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import { AGENT_KEY_REFUSAL } from '../domain/role.rule.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const ID = '0190a0b0-0000-7000-8000-0000000000f1';
const AGENT_KEY_ID = '0190a0b0-0000-7000-8000-0000000000ab';
const T = '2026-01-01T00:00:00.000000Z';
const job: recordsv1.Record = { id: ID, entityType: 'FarmJob', status: 'running', active: true, createdAt: T, updatedAt: T, dataJson: '{"name":"comp"}' };
const chunk = { id: ID, jobId: ID, index: 0, state: 'leased', attempt: 1 };
const state = { representationId: ID, site: 'paris', status: 'in_progress', priority: 50, progress: 0.5, attempts: 0, updatedAt: T };

/** The agent routes: the only ones an agent key may call, each with a body its schema takes. */
const AGENT_CALLS: [method: string, path: string, body?: unknown][] = [
  ['POST', '/farm/claim', { pool: 'gpu', worker: 'w1' }],
  ['POST', `/farm/chunks/${ID}/heartbeat`, { lease: 'lease_x' }],
  ['POST', `/farm/chunks/${ID}/complete`, { lease: 'lease_x' }],
  ['POST', `/farm/chunks/${ID}/fail`, { lease: 'lease_x', error: 'boom' }],
  ['GET', `/farm/jobs/${ID}`],
  ['POST', '/sitesync/claim', { site: 'paris', agent: 'a1' }],
  ['POST', `/sitesync/state/${ID}/paris`, { lease: 'ssl_x', status: 'in_progress' }],
];

/** Every authenticated operation of the OpenAPI document, its path filled in, and whether it is an agent route. */
async function operations(): Promise<{ method: string; path: string; agent: boolean }[]> {
  const doc = (await call('GET', '/openapi.json')).json as { paths: Record<string, Record<string, { security: unknown[]; 'x-agent-key'?: boolean }>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => op.security.length > 0)
      .map(([method, op]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, ID), agent: op['x-agent-key'] === true })),
  );
}

const peerCalls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
  gw.state.tokens.set('svc_agent', {
    userId: USERS.artist.id,
    role: 'Artist',
    authKind: 'api_key',
    apiKeyId: AGENT_KEY_ID,
    email: 'artist@example.com',
    cacheSeconds: 60,
    access: { scope: 'agent', pools: ['gpu', 'cpu'] },
  });
  gw.state.tokens.set('svc_agent_any', { ...gw.state.tokens.get('svc_agent')!, access: { scope: 'agent', pools: [] } });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
  gw.state.farmAnswers = new Map<string, unknown>([
    ['claim', { job, chunk, lease: 'lease_new' }],
    ['heartbeat', { chunk }],
    ['completeChunk', { chunk, job }],
    ['failChunk', { chunk, job }],
    ['getJob', { job }],
  ]);
  gw.state.sitesyncAnswers = new Map<string, unknown>([
    ['claimStates', { items: [{ state, lease: 'ssl_new' }] }],
    ['reportState', { state }],
  ]);
});

describe('an agent key', () => {
  it('is refused on every route but the agent routes: 403 forbidden before its body is read, nothing asked of a service', async () => {
    const ops = await operations();
    expect(ops.filter((o) => o.agent).map((o) => `${o.method} ${o.path}`)).toEqual(AGENT_CALLS.map(([m, p]) => `${m} ${p.replace('/paris', `/${ID}`)}`));
    const refused = ops.filter((o) => !o.agent);
    expect(refused.length).toBeGreaterThan(100);
    for (const { method, path } of refused) {
      // A body no route takes: the refusal comes before validation.
      const r = await call(method, path, { token: 'svc_agent', ...(method === 'GET' || method === 'DELETE' ? {} : { raw: '{"not json' }) });
      expect([r.status, r.json?.code, r.json?.detail], `${method} ${path}`).toEqual([403, 'forbidden', AGENT_KEY_REFUSAL]);
    }
    expect(peerCalls()).toEqual([]);
  });

  it('a bad credential is still 401 first; a login token and a normal key of the same user are not limited', async () => {
    expect((await call('GET', `/entities/Shot/${ID}`, { token: 'svc_unknown' })).status).toBe(401);
    expect((await call('GET', `/entities/Shot/${ID}`, { token: 'svc_agent' })).status).toBe(403);
    gw.state.records.set(ID, { id: ID, entityType: 'Shot', active: true, createdAt: T, updatedAt: T, dataJson: '{}' });
    for (const token of ['artist-token', 'svc_artist']) expect((await call('GET', `/entities/Shot/${ID}`, { token })).status, token).toBe(200);
    gw.state.records.delete(ID);
  });

  it('calls the agent routes, its scope and pools carried to the service in the signed principal', async () => {
    for (const [method, path, body] of AGENT_CALLS) {
      gw.state.calls.length = 0;
      const r = await call(method, path, { token: 'svc_agent', body });
      expect(r.status, `${method} ${path}`).toBe(200);
      const [sent] = peerCalls();
      expect(sent?.ctx.principal, `${method} ${path}`).toMatchObject({ userId: USERS.artist.id, role: 'Artist', scope: 'agent', pools: ['gpu', 'cpu'] });
    }
    // Without pools: any pool, so no pools travel.
    gw.state.calls.length = 0;
    expect((await call('POST', '/farm/claim', { token: 'svc_agent_any', body: { pool: 'default', worker: 'w1' } })).status).toBe(200);
    expect(peerCalls()[0]?.ctx.principal).toMatchObject({ scope: 'agent' });
    expect(peerCalls()[0]?.ctx.principal?.pools).toBeUndefined();
    // A normal key carries no scope at all.
    gw.state.calls.length = 0;
    expect((await call('POST', '/farm/claim', { token: 'svc_artist', body: { pool: 'default', worker: 'w1' } })).status).toBe(200);
    expect(peerCalls()[0]?.ctx.principal?.scope).toBeUndefined();
  });

  it("keeps the agent routes' own checks: a Viewer's agent key is still 403 there, a bad body 422", async () => {
    gw.state.tokens.set('svc_viewer_agent', { ...gw.state.tokens.get('svc_agent')!, userId: USERS.viewer.id, role: 'Viewer' });
    const viewer = await call('POST', '/farm/claim', { token: 'svc_viewer_agent', body: { pool: 'gpu', worker: 'w1' } });
    expect([viewer.status, viewer.json.detail]).toEqual([403, 'a Viewer may not claim farm chunks']);
    const bad = await call('POST', '/farm/claim', { token: 'svc_agent', body: { pool: 'gpu' } });
    expect(bad.status).toBe(422);
    expect(peerCalls()).toEqual([]);
  });

  it('is refused by the WebSocket: the handshake completes, then 1008 before any message', async () => {
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/events/ws?token=svc_agent`);
    const messages: unknown[] = [];
    ws.on('message', (m) => messages.push(m));
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
    );
    expect(closed).toEqual({ code: 1008, reason: AGENT_KEY_REFUSAL });
    expect(messages).toEqual([]);
    expect(peerCalls()).toEqual([]);
  });
});

describe('issuing one', () => {
  it('sends scope and pools to auth and shows them; pools need the agent scope, 1..50 distinct names of 1..64 characters', async () => {
    const r = await call('POST', '/auth/api-keys', { token: 'artist-token', body: { name: 'render-07', scope: 'agent', pools: ['gpu', 'cpu'] } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'render-07', scope: 'agent', pools: ['gpu', 'cpu'] });
    expect(peerCalls()[0]?.req).toMatchObject({ name: 'render-07', access: { scope: 'agent', pools: ['gpu', 'cpu'] } });
    gw.state.calls.length = 0;
    const plain = await call('POST', '/auth/api-keys', { token: 'artist-token', body: { name: 'plain', scope: null } });
    expect([plain.status, plain.json.scope, plain.json.pools]).toEqual([200, null, null]);
    expect((peerCalls()[0]?.req as { access?: unknown }).access).toBeUndefined();
    gw.state.calls.length = 0;
    for (const [body, locs] of [
      [{ name: 'k', pools: ['gpu'] }, ['body.pools']],
      [{ name: 'k', scope: null, pools: ['gpu'] }, ['body.pools']],
      [{ name: 'k', scope: 'admin' }, ['body.scope']],
      [{ name: 'k', scope: 'agent', pools: [] }, ['body.pools']],
      [{ name: 'k', scope: 'agent', pools: Array.from({ length: 51 }, (_, i) => `p${i}`) }, ['body.pools']],
      [{ name: 'k', scope: 'agent', pools: ['gpu', '', 'x'.repeat(65), 'gpu'] }, ['body.pools.1', 'body.pools.2', 'body.pools.3']],
      [{ name: 'k', scope: 'agent', pools: ['gpu', 'cpu', 'gpu'] }, ['body.pools.2']],
      [{ name: 'k', scope: 'agent', pools: 'gpu' }, ['body.pools']],
    ] as const) {
      const bad = await call('POST', '/auth/api-keys', { token: 'artist-token', body });
      expect(bad.status, JSON.stringify(body)).toBe(422);
      expect(bad.json.detail.map((p: { loc: string[] }) => p.loc.join('.')).sort(), JSON.stringify(body)).toEqual(locs);
    }
    expect(peerCalls()).toEqual([]);
  });
});
