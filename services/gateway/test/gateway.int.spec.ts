/**
 * The gateway in front of the real auth, records and events services (in-process, real
 * PostgreSQL and NATS, a fresh database and NATS prefix). Skipped when those services have
 * not been built.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@reelbase/lib-platform';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, TEST_SECRETS_KEY, type TestDatabase } from '@reelbase/lib-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { parseGatewayConfig } from '../src/config.js';
import { startGateway, type RunningGateway } from '../src/service.js';
import { httpClient } from './support/http.js';

const entry = (name: string) => fileURLToPath(new URL(`../../${name}/dist/service.js`, import.meta.url));
const configEntry = (name: string) => fileURLToPath(new URL(`../../${name}/dist/config.js`, import.meta.url));
const built = ['auth', 'records', 'events'].every((s) => existsSync(entry(s)) && existsSync(configEntry(s)));

type Stoppable = { grpcPort: number; stop(): Promise<void> };

async function start(name: string, env: Record<string, string>): Promise<Stoppable> {
  const svc = (await import(entry(name))) as Record<string, (c: unknown, l?: unknown) => Promise<Stoppable>>;
  const cfg = (await import(configEntry(name))) as Record<string, (e: Record<string, string>) => unknown>;
  const cap = name[0]!.toUpperCase() + name.slice(1);
  return svc[`start${cap}`]!(cfg[`parse${cap}Config`]!(env), createLogger(name, 'silent'));
}

const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe.skipIf(!built)('gateway with the real services', () => {
  let db: TestDatabase;
  let prefix: string;
  const services: Stoppable[] = [];
  let gw: RunningGateway;
  let url = '';
  const call = httpClient(() => url);

  beforeAll(async () => {
    db = await createTestDatabase();
    prefix = uniquePrefix('gw');
    const env = {
      DATABASE_URL: db.url,
      NATS_PREFIX: prefix,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'silent',
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      SECRETS_KEY: TEST_SECRETS_KEY,
    };
    const records = await start('records', env);
    const events = await start('events', env);
    const auth = await start('auth', { ...env, RECORDS_ADDR: `127.0.0.1:${records.grpcPort}`, PASSWORD_SCRYPT_COST: '1024' });
    services.push(auth, events, records);
    gw = await startGateway(
      parseGatewayConfig({
        INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
        GATEWAY_PORT: '0',
        HTTP_PORT: '0',
        NATS_PREFIX: prefix,
        AUTH_ADDR: `127.0.0.1:${auth.grpcPort}`,
        RECORDS_ADDR: `127.0.0.1:${records.grpcPort}`,
        EVENTS_ADDR: `127.0.0.1:${events.grpcPort}`,
        RATE_LIMIT_RPS: '1000',
        RATE_LIMIT_BURST: '1000',
        LOG_LEVEL: 'silent',
      }),
      createLogger('gateway', 'silent'),
    );
    url = `http://127.0.0.1:${gw.httpPort}`;
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    for (const s of services) await s.stop();
    await db?.drop();
    if (prefix) await deleteStreams(prefix);
  });

  it('bootstraps, writes records, streams events and revokes keys end to end', async () => {
    expect((await call('GET', '/readyz')).status).toBe(200);

    const reg = await call('POST', '/auth/register', { body: { email: 'admin@example.com', password: 'correct horse', name: 'Admin' } });
    expect(reg.status).toBe(200);
    const admin = reg.json.access_token as string;
    expect(admin).toBeTruthy();
    expect(reg.json.user.entity_type).toBe('User');

    const me = await call('GET', '/me', { token: admin });
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ id: reg.json.user.id, entity_type: 'User', role: 'Admin', auth: 'token' });

    const ws = new WebSocket(`${url.replace('http', 'ws')}/events/ws?token=${admin}&since=0`);
    const received: any[] = [];
    ws.on('message', (m) => received.push(JSON.parse(String(m))));
    await new Promise((r) => ws.once('open', r));

    const project = await call('POST', '/entities/Project', { token: admin, body: { data: { name: 'Demo', code: 'demo' } } });
    expect(project.status).toBe(200);
    const shot = await call('POST', '/entities/Shot', { token: admin, body: { project_id: project.json.id, data: { code: 'sh010' } } });
    expect(shot.status).toBe(200);
    expect(shot.headers.get('etag')).toBe(`"${shot.json.updated_at}"`);

    const patched = await call('PATCH', `/entities/Shot/${shot.json.id}`, {
      token: admin,
      body: { data: { description: 'wide' } },
      headers: { 'if-match': shot.headers.get('etag')! },
    });
    expect(patched.status).toBe(200);
    const stale = await call('PATCH', `/entities/Shot/${shot.json.id}`, {
      token: admin,
      body: { data: { description: 'again' } },
      headers: { 'if-match': shot.headers.get('etag')! },
    });
    expect(stale.status).toBe(409);
    expect(stale.json.code).toBe('stale_write');

    const extra = await call('POST', '/entities/Shot', { token: admin, body: { project_id: project.json.id, colour: 'red' } });
    expect(extra.status).toBe(422);
    expect(extra.json.detail[0]).toMatchObject({ loc: ['body', 'colour'], type: 'extra_forbidden' });

    expect((await call('DELETE', `/entities/Shot/${shot.json.id}`, { token: admin })).json).toEqual({ id: shot.json.id, entity_type: 'Shot', retired: true });
    expect((await call('GET', `/entities/Shot/${shot.json.id}`, { token: admin })).status).toBe(404);
    expect((await call('POST', `/entities/Shot/${shot.json.id}/revive`, { token: admin })).status).toBe(200);

    // The log has every write (user bootstrap included), in id order, and the socket saw each once.
    await until(async () => (await call('GET', '/events?after=0&limit=1000', { token: admin })).json.items.length >= 6);
    const log = (await call('GET', '/events?after=0&limit=1000', { token: admin })).json.items as any[];
    await until(() => received.length >= log.length);
    expect(received.map((e) => e.id)).toEqual(log.map((e) => e.id));
    expect(received.map((e) => e.id)).toEqual(log.map((_, i) => i + 1));
    expect(log.find((e) => e.entity_id === shot.json.id && e.action === 'create')?.changes).toMatchObject({ code: 'sh010' });
    ws.close();

    // API keys: issue, use, revoke → refused within seconds, and a socket on it is closed with 1008.
    const key = await call('POST', '/auth/api-keys', { token: admin, body: { name: 'farm' } });
    expect(key.status).toBe(200);
    expect(key.json.token).toMatch(/^svc_/);
    expect((await call('GET', '/me', { token: key.json.token })).json.auth).toBe('api_key');
    const list = await call('GET', '/auth/api-keys', { token: admin });
    expect(list.json.items.map((k: any) => k.id)).toContain(key.json.id);

    const keySocket = new WebSocket(`${url.replace('http', 'ws')}/events/ws?token=${key.json.token}`);
    const keyClosed = new Promise<number>((r) => keySocket.on('close', (code) => r(code)));
    await new Promise((r) => keySocket.once('open', r));
    await new Promise((r) => setTimeout(r, 200));

    const revoked = await call('DELETE', `/auth/api-keys/${key.json.id}`, { token: admin });
    expect(revoked.json).toEqual({ id: key.json.id, revoked: true });
    await until(async () => (await call('GET', '/me', { token: key.json.token })).status === 401, 5000);
    expect(await keyClosed).toBe(1008);
  });
});
