/**
 * Two gateways on the real NATS (a fresh prefix) in front of the same fake services: a User
 * write answered by one gateway is refused by the other within a second, long before their
 * caches (AUTH_CACHE_SECONDS) would have let the old principal go.
 */
import { Readiness } from '@reelbase/lib-platform';
import { uniquePrefix } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGatewayConfig } from '../src/config.js';
import { startGateway, type RunningGateway } from '../src/service.js';
import { captureLogs, emptyNotifierState, fakePeers, tokenTable, USERS, type FakeState } from './support/fakes.js';
import { httpClient } from './support/http.js';

const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';

describe('User changes across gateways', () => {
  const state: FakeState = {
    tokens: tokenTable(),
    records: new Map(),
    events: [],
    down: new Set(),
    calls: [],
    failNext: new Map(),
    notifier: emptyNotifierState(),
  };
  let a: RunningGateway;
  let b: RunningGateway;
  const callA = httpClient(() => `http://127.0.0.1:${a.httpPort}`);
  const callB = httpClient(() => `http://127.0.0.1:${b.httpPort}`);

  beforeAll(async () => {
    const env = {
      GATEWAY_PORT: '0',
      HTTP_PORT: '0',
      NATS_URL,
      NATS_PREFIX: uniquePrefix('gwuser'),
      AUTH_CACHE_SECONDS: '30',
      INTERNAL_AUTH_SECRET: 'x'.repeat(48),
    };
    const start = () => startGateway(parseGatewayConfig(env), captureLogs().logger, { peers: fakePeers(state), readiness: new Readiness() });
    a = await start();
    b = await start();
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('a demotion, then a retirement, written through one gateway are refused by the other within a second', async () => {
    const sup = USERS.supervisor;
    state.records.set(sup.id, {
      id: sup.id,
      entityType: 'User',
      active: true,
      createdAt: 't',
      updatedAt: 't',
      dataJson: JSON.stringify({ email: 'supervisor@example.com', role: 'Supervisor' }),
    });
    const shot = () => callB('POST', '/entities/Shot', { token: 'supervisor-token', body: { project_id: PROJECT, data: { code: 'sh' } } });
    expect((await shot()).status).toBe(200); // cached on B for 30 s from here

    state.tokens.set('supervisor-token', { ...state.tokens.get('supervisor-token')!, role: 'Viewer' });
    expect((await callA('PATCH', `/entities/User/${sup.id}`, { token: 'admin-token', body: { data: { role: 'Viewer' } } })).status).toBe(200);
    const demotedAt = Date.now();
    let status = (await shot()).status;
    while (status !== 403 && Date.now() - demotedAt < 1000) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await shot()).status;
    }
    expect(status).toBe(403);

    expect((await callB('GET', '/me', { token: 'supervisor-token' })).status).toBe(200); // cached again
    state.tokens.delete('supervisor-token');
    expect((await callA('DELETE', `/entities/User/${sup.id}`, { token: 'admin-token' })).status).toBe(200);
    const retiredAt = Date.now();
    let me = (await callB('GET', '/me', { token: 'supervisor-token' })).status;
    while (me !== 401 && Date.now() - retiredAt < 1000) {
      await new Promise((r) => setTimeout(r, 20));
      me = (await callB('GET', '/me', { token: 'supervisor-token' })).status;
    }
    expect(me).toBe(401);
  });
});
