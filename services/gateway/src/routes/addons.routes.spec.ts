import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';
import { ADDON_SETTINGS_BODY_BYTES, ADDON_VERSION_BODY_BYTES } from '../schemas/addons.schema.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PROJECT = '0190A0B0-0000-7000-8000-0000000000C1';
const addonCalls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');
const VERSION = { title: 'Publish', settings_schema: { type: 'object' }, defaults: {} };

beforeAll(async () => {
  gw = await startTestGateway({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
});
afterAll(async () => {
  await gw.stop();
});
beforeEach(() => {
  gw.state.calls.length = 0;
  gw.state.down.clear();
});

describe('addon routes at the gateway', () => {
  it('passes each route to one AddonsService call with its path, query and body', async () => {
    const put = await call('PUT', '/addons/publish/versions/1.2.0', { token: 'admin-token', body: VERSION });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ rpc: 'registerAddonVersion', request: { name: 'publish', version: '1.2.0', bodyJson: JSON.stringify(VERSION) } });
    const settings = await call('PUT', `/addons/publish/settings?project_id=${PROJECT}`, { token: 'supervisor-token', body: { fps: 25 } });
    expect(settings.json.request).toEqual({ name: 'publish', version: '', projectId: PROJECT.toLowerCase(), bodyJson: '{"fps":25}' });
    const read = await call('GET', `/addons/publish/settings?project_id=${PROJECT}&version=2.0.0`, { token: 'viewer-token' });
    expect(read.json).toEqual({ rpc: 'getAddonSettings', request: { name: 'publish', projectId: PROJECT.toLowerCase(), version: '2.0.0' } });
    expect((await call('GET', '/addons', { token: 'viewer-token' })).json.rpc).toBe('listAddons');
  });

  it('refuses roles before the body is looked at (403 wins over 422 and 413)', async () => {
    for (const [method, path, token] of [
      ['PUT', '/addons/publish/versions/1.0.0', 'supervisor-token'],
      ['PATCH', '/addons/publish', 'supervisor-token'],
      ['DELETE', '/addons/publish/versions/1.0.0', 'supervisor-token'],
      ['PUT', '/addons/publish/settings', 'supervisor-token'],
      ['PUT', `/addons/publish/settings?project_id=${PROJECT}`, 'artist-token'],
      ['PUT', `/addons/publish/pin?project_id=${PROJECT}`, 'coordinator-token'],
    ] as const) {
      const res = await call(method, path, { token, raw: `{"x": "${'y'.repeat(300_000)}"` });
      expect([method, path, res.status, res.json?.code]).toEqual([method, path, 403, 'forbidden']);
    }
    expect(addonCalls()).toEqual([]);
  });

  it('answers 413 for settings bodies over their limit, before the service is asked', async () => {
    const big = { blob: 'x'.repeat(ADDON_SETTINGS_BODY_BYTES) };
    const res = await call('PUT', '/addons/publish/settings', { token: 'admin-token', body: big });
    expect([res.status, res.json.code]).toEqual([413, 'payload_too_large']);
    const mb = await call('PUT', `/addons/publish/settings?project_id=${PROJECT}`, { token: 'admin-token', body: { blob: 'x'.repeat(1_048_576) } });
    expect([mb.status, mb.json.code]).toEqual([413, 'payload_too_large']);
    const schema = await call('PUT', '/addons/publish/versions/1.0.0', {
      token: 'admin-token',
      body: { ...VERSION, settings_schema: { type: 'object', description: 'x'.repeat(ADDON_VERSION_BODY_BYTES) } },
    });
    expect(schema.status).toBe(413);
    expect(addonCalls()).toEqual([]);
    // Other routes keep the gateway's own limit.
    const entity = await call('POST', '/entities/Shot', { token: 'admin-token', body: { data: { code: 'x'.repeat(ADDON_SETTINGS_BODY_BYTES) } } });
    expect(entity.status).not.toBe(413);
  });

  it('422 for names, unknown body keys, a body that is not an object and a bad project id, all at once', async () => {
    const res = await call('PUT', '/addons/Bad%20Name/versions/1.0.0', { token: 'admin-token', body: { ...VERSION, extra: 1, title: '' } });
    expect(res.status).toBe(422);
    expect(res.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual(
      expect.arrayContaining([
        ['path', 'name'],
        ['body', 'extra'],
        ['body', 'title'],
      ]),
    );
    const list = await call('PUT', '/addons/publish/settings?project_id=nope', { token: 'admin-token', body: [1] });
    expect(list.json.detail.map((p: { loc: unknown[] }) => p.loc)).toEqual([['query', 'project_id'], ['body']]);
    const pin = await call('PUT', '/addons/publish/pin', { token: 'admin-token', body: { version: '1.0.0' } });
    expect(pin.json.detail).toEqual([expect.objectContaining({ loc: ['query', 'project_id'], type: 'missing' })]);
    expect(addonCalls()).toEqual([]);
  });

  it('503 when the schema service is down', async () => {
    gw.state.down.add('addons');
    const res = await call('GET', '/addons/publish', { token: 'viewer-token' });
    expect([res.status, res.json.code]).toEqual([503, 'unavailable']);
  });
});
