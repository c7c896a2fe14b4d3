import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, USERS, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const P = '0190a0b0-0000-7000-8000-0000000000b1';
const S = '0190a0b0-0000-7000-8000-0000000000c1';
const calls = () => gw.state.calls.filter((c) => c.method !== 'authenticate');
const locs = (json: any) => (json.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.')).sort();

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

describe('scheduler routes', () => {
  it('are Admin only: 401 without a token, 403 for every other role before the body is read', async () => {
    const routes: [string, string][] = [
      ['POST', '/scheduler/schedules'],
      ['GET', '/scheduler/schedules'],
      ['GET', `/scheduler/schedules/${S}`],
      ['PATCH', `/scheduler/schedules/${S}`],
      ['DELETE', `/scheduler/schedules/${S}`],
      ['POST', `/scheduler/schedules/${S}/run`],
      ['GET', `/scheduler/schedules/${S}/runs`],
    ];
    for (const [method, path] of routes) {
      expect((await call(method, path, { body: method === 'POST' || method === 'PATCH' ? { bad: 1 } : undefined })).status, `${method} ${path}`).toBe(401);
      for (const token of ['supervisor-token', 'artist-token', 'viewer-token']) {
        const res = await call(method, path, { token, body: method === 'POST' || method === 'PATCH' ? { bad: 1 } : undefined });
        expect(res.status, `${token} ${method} ${path}`).toBe(403);
        expect(res.json.code).toBe('forbidden');
      }
    }
    expect(calls()).toHaveLength(0);
  });

  it('validate the body: a bad cron at body.cron and a bad zone at body.timezone beside every other problem; the job as POST /farm/jobs', async () => {
    const bad = await call('POST', '/scheduler/schedules', {
      token: 'admin-token',
      body: {
        name: '',
        cron: '61 * * * *',
        timezone: 'Mars/Olympus',
        target: { kind: 'farm_job', job: { project_id: P, name: 'n', kind: 'k', priority: 101, extra: 1 } },
        typo: 1,
      },
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.json)).toEqual(['body.cron', 'body.name', 'body.target.job.extra', 'body.target.job.priority', 'body.timezone', 'body.typo']);
    for (const cron of ['* * * *', '@yearly', '0 0 L * *', '5/5 * * * *']) {
      const res = await call('POST', '/scheduler/schedules', { token: 'admin-token', body: { name: 'n', cron, target: { kind: 'event', name: 'tick' } } });
      expect(res.status, cron).toBe(422);
      expect(locs(res.json), cron).toEqual(['body.cron']);
    }
    const hook = await call('PATCH', `/scheduler/schedules/${S}`, {
      token: 'admin-token',
      body: { timezone: '+01:00', target: { kind: 'webhook', url: 'https://u:p@example.com/x', secret: 'short' } },
    });
    expect(locs(hook.json)).toEqual(['body.target.secret', 'body.target.url', 'body.timezone']);
    const kind = await call('POST', '/scheduler/schedules', { token: 'admin-token', body: { name: 'n', cron: '@daily', target: { kind: 'shell' } } });
    expect(locs(kind.json)).toEqual(['body.target.kind']);
    expect(calls()).toHaveLength(0);
  });

  it('relay valid requests to the scheduler with the caller and the job’s defaults filled in', async () => {
    const res = await call('POST', '/scheduler/schedules', {
      token: 'admin-token',
      body: {
        name: 'Nightly dailies',
        cron: '0 2 * * 1-5',
        timezone: 'Europe/London',
        target: { kind: 'farm_job', job: { project_id: P, name: 'dailies', kind: 'playlist' } },
      },
    });
    expect(res.status).toBe(200);
    const c = calls()[0]!;
    expect(c.method).toBe('createSchedule');
    expect(c.ctx.principal).toMatchObject({ userId: USERS.admin.id, role: 'Admin' });
    expect(JSON.parse((c.req as { bodyJson: string }).bodyJson)).toEqual({
      name: 'Nightly dailies',
      cron: '0 2 * * 1-5',
      timezone: 'Europe/London',
      active: true,
      catch_up: 'skip',
      target: {
        kind: 'farm_job',
        job: { project_id: P, name: 'dailies', kind: 'playlist', pool: 'default', priority: 50, chunk_size: 10, max_attempts: 3, depends_on: [] },
      },
    });
    const runs = await call('GET', `/scheduler/schedules/${S}/runs?limit=2&cursor=abc`, { token: 'admin-token' });
    expect(runs.status).toBe(200);
    expect(calls()[1]).toMatchObject({ method: 'listRuns', req: { id: S, limit: 2, cursor: 'abc' } });
    expect((await call('GET', `/scheduler/schedules/${S}/runs?limit=0`, { token: 'admin-token' })).status).toBe(422);
    expect((await call('GET', '/scheduler/schedules/nope', { token: 'admin-token' })).status).toBe(422);
    gw.state.down.add('scheduler');
    expect((await call('GET', '/scheduler/schedules', { token: 'admin-token' })).status).toBe(503);
  });
});
