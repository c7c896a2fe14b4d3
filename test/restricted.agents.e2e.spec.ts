/**
 * Restricted projects and the agents, against the whole stack (docs/api-notes.md, "Restricted
 * projects", "Farm", "Site sync"): farm and site-sync claims hand out only work of projects the
 * claiming key's user may read; a restricted job's chunks and job routes, and its site-sync
 * states, are 404 to anyone else (whatever lease they hold) and left out of their lists and
 * summaries; and agent keys (`"scope": "agent"`, `"pools"`) call only the agent routes, claim only
 * from their pools and only what their user may read.
 */
import { describe, expect, it } from 'vitest';
import { expectStatus, type Api } from './support/api.client.js';
import type { Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import {
  create,
  expectHidden,
  expectLikeMissing,
  link,
  MISSING_ID,
  useRestrictedWorld,
  WORLD_SITE,
  type RestrictedWorld,
} from './support/restricted.fixture.js';

describe('restricted projects: farm, site sync, agent keys (whole stack)', () => {
  let w: RestrictedWorld;
  useRestrictedWorld('restricted-agents', (world) => (w = world));

  /** An API key of `s` (an agent key with `extra` `{"scope": "agent", ...}`), as a client. */
  const keyOf = async (s: Session, extra: Record<string, unknown> = {}): Promise<Api> =>
    w.e.api.as(expectStatus(await s.api.post('/auth/api-keys', { name: `key ${Date.now()}`, ...extra }), 200, 'POST /auth/api-keys').token as string);
  const submit = async (projectId: string, pool: string, body: Record<string, unknown> = {}) =>
    expectStatus(await w.admin.api.post('/farm/jobs', { project_id: projectId, name: `job ${pool}`, kind: 'render', pool, ...body }), 200, 'POST /farm/jobs');
  const claim = (api: Api, pool: string) => api.post('/farm/claim', { pool, worker: 'host-1' });
  const claimed = async (api: Api, pool: string) => expectStatus(await claim(api, pool), 200, `claim from ${pool}`);
  const nothingDue = async (api: Api, pool: string) => expect((await claim(api, pool)).status).toBe(204);
  const representation = (projectId: string, name: string) => create(w.admin.api, 'Representation', { project_id: projectId, data: { name } });
  const site = async (code: string) => expectStatus(await w.admin.api.call('PUT', `/sitesync/sites/${code}`, { body: { name: code, kind: 'remote' } }), 200);
  const stateIds = async (s: Session | Api, query: string) => {
    const api = 'api' in s ? s.api : s;
    return (expectStatus(await api.get(`/sitesync/state?limit=1000&${query}`), 200, 'GET /sitesync/state').items as any[]).map(
      (st) => st.representation_id as string,
    );
  };

  it("a farm claim hands out only chunks of projects the key's user may read", async () => {
    const pool = 'claims';
    // The restricted job comes first by priority and age: only a reader may get it.
    const hidden = await submit(w.restricted.project.id, pool, { frames: '1-2', chunk_size: 1, priority: 90 });
    const open = await submit(w.open.project.id, pool, { frames: '1', priority: 10 });
    const outsiderKey = await keyOf(w.outsider);
    const memberKey = await keyOf(w.member);
    expectHidden(await outsiderKey.get(`/entities/FarmJob/${hidden.id}`), 'an API key acts as its user');

    const first = await claimed(outsiderKey, pool);
    expect(first.job.id).toBe(open.id);
    await nothingDue(outsiderKey, pool);
    await nothingDue(w.outsider.api, pool);
    await nothingDue(await keyOf(w.coordOutsider), pool);

    const got = [await claimed(memberKey, pool), await claimed(memberKey, pool)];
    expect(got.map((c) => [c.job.id, c.chunk.index])).toEqual([
      [hidden.id, 0],
      [hidden.id, 1],
    ]);
    await nothingDue(memberKey, pool);
    for (const c of got) expectStatus(await memberKey.post(`/farm/chunks/${c.chunk.id}/complete`, { lease: c.chunk.lease }), 200, 'member completes');
    expectStatus(await outsiderKey.post(`/farm/chunks/${first.chunk.id}/complete`, { lease: first.chunk.lease }), 200, 'outsider completes');
    expect(expectStatus(await w.admin.api.get(`/entities/FarmJob/${hidden.id}`), 200).status).toBe('done');
  });

  it("a restricted job's chunk and job routes are 404 to a non-member, whatever lease they hold", async () => {
    const pool = 'routes';
    const job = await submit(w.restricted.project.id, pool, { frames: '1-2', chunk_size: 1 });
    const memberKey = await keyOf(w.member);
    const { chunk } = await claimed(memberKey, pool);
    const outsiderKey = await keyOf(w.outsider);
    for (const [op, body] of [
      ['heartbeat', { lease: chunk.lease }],
      ['fail', { lease: chunk.lease, error: 'outsider' }],
      ['complete', { lease: chunk.lease }],
    ] as Array<[string, Record<string, unknown>]>) {
      expectHidden(await outsiderKey.post(`/farm/chunks/${chunk.id}/${op}`, body), `outsider ${op} with the lease`);
      expectHidden(await outsiderKey.post(`/farm/chunks/${chunk.id}/${op}`, { ...body, lease: 'not-the-lease' }), `outsider ${op} with another lease`);
    }
    // A reader with a lease that is not the chunk's: 409 as ever.
    expectError(await w.member.api.post(`/farm/chunks/${chunk.id}/heartbeat`, { lease: 'not-the-lease' }), 409, 'lease_lost');

    expectHidden(await w.outsider.api.get(`/farm/jobs/${job.id}/chunks`), 'outsider lists chunks');
    expect(expectStatus(await w.member.api.get(`/farm/jobs/${job.id}/chunks`), 200).items).toHaveLength(2);
    expectHidden(await w.outsider.api.get(`/farm/jobs/${job.id}`), 'outsider GET /farm/jobs/{id}');
    expect(expectStatus(await w.member.api.get(`/farm/jobs/${job.id}`), 200, 'member GET /farm/jobs/{id}').id).toBe(job.id);
    // Pause and the rest: 404 before the role's 403 (an Artist on another user's job), for a Coordinator too.
    for (const action of ['pause', 'resume', 'cancel', 'retry']) {
      expectHidden(await w.outsider.api.post(`/farm/jobs/${job.id}/${action}`), `outsider ${action}`);
      expectHidden(await w.coordOutsider.api.post(`/farm/jobs/${job.id}/${action}`), `coordinator outsider ${action}`);
    }
    expectError(await w.member.api.post(`/farm/jobs/${job.id}/pause`), 403, 'forbidden');
    expectHidden(await w.coordOutsider.api.post(`/farm/jobs/${job.id}/report`, { progress: 50 }), 'report');
    // Job lists: the restricted project's jobs are not in the outsider's.
    const jobs = async (s: Session) =>
      (
        expectStatus(await s.api.post('/entities/FarmJob/query', { filters: [['pool', 'in', [pool, w.restricted.farmJob.data.pool]]] }), 200).items as any[]
      ).map((r) => r.id);
    expect(await jobs(w.outsider)).toEqual([]);
    expect((await jobs(w.member)).sort()).toEqual([job.id, w.restricted.farmJob.id].sort());

    // Nothing the outsider sent changed the chunk: the member's lease still completes it.
    expect(expectStatus(await memberKey.post(`/farm/chunks/${chunk.id}/complete`, { lease: chunk.lease }), 200).chunk.state).toBe('done');
  });

  it('site-sync states and summaries leave the restricted project out; its states are 404 to a non-member', async () => {
    const repR = w.restricted.representation.id;
    const repO = w.open.representation.id;
    const outsider = await stateIds(w.outsider, `site=${WORLD_SITE}`);
    expect(outsider).toContain(repO);
    expect(outsider).not.toContain(repR);
    expect(await stateIds(w.outsider, `project_id=${w.restricted.project.id}`)).toEqual([]);
    expect(await stateIds(w.outsider, `representation_id=${repR}`)).toEqual([]);
    for (const s of [w.member, w.admin]) expect(await stateIds(s, `site=${WORLD_SITE}`)).toEqual(expect.arrayContaining([repO, repR]));
    expect(await stateIds(w.member, `representation_id=${repR}`)).toEqual([repR]);

    const total = async (s: Session, query: string) =>
      Object.values(expectStatus(await s.api.get(`/sitesync/summary?${query}`), 200).counts as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(await total(w.admin, `site=${WORLD_SITE}`)).toBe((await total(w.outsider, `site=${WORLD_SITE}`)) + 1);
    expect(await total(w.member, `site=${WORLD_SITE}`)).toBe(await total(w.admin, `site=${WORLD_SITE}`));
    expect(await total(w.outsider, `project_id=${w.restricted.project.id}`)).toBe(0);
    expect(await total(w.member, `project_id=${w.restricted.project.id}`)).toBeGreaterThan(0);

    const statePath = `/sitesync/state/${repR}/${WORLD_SITE}`;
    expectHidden(await w.outsider.api.patch(statePath, { status: 'paused' }), 'outsider PATCH');
    expectHidden(await w.outsider.api.post(statePath, { lease: 'not-the-lease', status: 'in_progress' }), 'outsider report');
    expectError(await w.member.api.post(statePath, { lease: 'not-the-lease', status: 'in_progress' }), 409, 'lease_lost');
    const [state] = expectStatus(await w.admin.api.get(`/sitesync/state?representation_id=${repR}&site=${WORLD_SITE}`), 200).items;
    expect(state.status).toBe('queued');

    // Asking for one of its representations answers as asking for one that does not exist.
    const ask = (id: string) => w.outsider.api.post('/sitesync/requests', { representation_ids: [repO, id], site: WORLD_SITE });
    expectLikeMissing(await ask(repR), await ask(MISSING_ID), 'POST /sitesync/requests');
  });

  it('a site-sync claim hands out only states of projects the claimer may read', async () => {
    const code = 'claims';
    await site(code);
    const hidden = await representation(w.restricted.project.id, 'claim-secret');
    const open = await representation(w.open.project.id, 'claim-open');
    expectStatus(await w.admin.api.post('/sitesync/requests', { representation_ids: [hidden.id], site: code, priority: 90 }), 200);
    expectStatus(await w.admin.api.post('/sitesync/requests', { representation_ids: [open.id], site: code, priority: 10 }), 200);
    const take = async (api: Api) =>
      expectStatus(await api.post('/sitesync/claim', { site: code, agent: 'box-1', limit: 10 }), 200, 'POST /sitesync/claim').items as any[];
    const outsiderKey = await keyOf(w.outsider);
    expect((await take(outsiderKey)).map((st) => st.representation_id)).toEqual([open.id]);
    expect(await take(outsiderKey)).toEqual([]);
    const memberKey = await keyOf(w.member);
    const [mine] = await take(memberKey);
    expect(mine).toMatchObject({ representation_id: hidden.id, project_id: w.restricted.project.id, status: 'in_progress' });
    expectHidden(await outsiderKey.post(`/sitesync/state/${hidden.id}/${code}`, { lease: mine.lease, status: 'synced' }), 'outsider reports with the lease');
    expect(expectStatus(await memberKey.post(`/sitesync/state/${hidden.id}/${code}`, { lease: mine.lease, status: 'synced' }), 200).status).toBe('synced');
  });

  it('an agent key: only the agent routes (403 elsewhere), only its pools, only what its user may read', async () => {
    const agentOf = (s: Session, pools?: string[]) => keyOf(s, { scope: 'agent', ...(pools ? { pools } : {}) });
    expectValidation(await w.outsider.api.post('/auth/api-keys', { name: 'bad', scope: 'agent', pools: [''] }), ['body', 'pools', 0]);
    expectValidation(await w.outsider.api.post('/auth/api-keys', { name: 'bad', scope: 'everything' }), ['body', 'scope']);
    const agent = await agentOf(w.outsider, ['gpu']);

    const refused: Array<[string, string, unknown?]> = [
      ['GET', `/entities/Shot/${w.open.shot.id}`],
      ['GET', '/events'],
      ['GET', '/events?after=0'],
      ['POST', '/entities/Shot', { project_id: w.open.project.id, data: { code: 'agent-sh' } }],
      ['PATCH', `/entities/Shot/${w.open.shot.id}`, { data: { description: 'agent' } }],
      ['POST', '/entities/Shot/query', { filters: [] }],
      ['GET', `/users/${w.outsider.user.id}/tasks`],
      ['GET', '/notifications'],
      ['POST', '/farm/jobs', { project_id: w.open.project.id, name: 'agent', kind: 'render', pool: 'gpu' }],
      ['GET', `/farm/jobs/${w.open.farmJob.id}/chunks`],
      ['POST', '/sitesync/requests', { representation_ids: [w.open.representation.id], site: WORLD_SITE }],
      ['GET', `/sitesync/state?site=${WORLD_SITE}`],
      ['POST', '/actions/list', { project_id: w.open.project.id, entity_type: 'Shot', entity_ids: [w.open.shot.id] }],
      ['POST', '/auth/api-keys', { name: 'another' }],
    ];
    for (const [method, path, body] of refused) {
      const res = await agent.call(method, path, body === undefined ? {} : { body });
      expectError(res, 403, 'forbidden');
    }

    // Claims: the gpu pool only, and only what the outsider may read.
    const hidden = await submit(w.restricted.project.id, 'gpu', { priority: 90 });
    const open = await submit(w.open.project.id, 'gpu', { priority: 10 });
    await submit(w.open.project.id, 'cpu');
    const cpu = await claim(agent, 'cpu');
    expectError(cpu, 403, 'forbidden');
    expect(cpu.body.detail).toContain('gpu');
    const got = await claimed(agent, 'gpu');
    expect(got.job.id).toBe(open.id);
    await nothingDue(agent, 'gpu');
    expectStatus(await agent.post(`/farm/chunks/${got.chunk.id}/heartbeat`, { lease: got.chunk.lease, progress: 50 }), 200, 'agent heartbeat');
    expect(expectStatus(await agent.get(`/farm/jobs/${open.id}`), 200, 'agent GET /farm/jobs/{id}').id).toBe(open.id);
    expectHidden(await agent.get(`/farm/jobs/${hidden.id}`), 'agent GET of a job its user may not read');
    expectStatus(await agent.post(`/farm/chunks/${got.chunk.id}/complete`, { lease: got.chunk.lease }), 200, 'agent complete');

    // The member's agent key gets the restricted job; one without pools claims from any pool.
    const memberAgent = await agentOf(w.member, ['gpu']);
    expect((await claimed(memberAgent, 'gpu')).job.id).toBe(hidden.id);
    const anyPool = await agentOf(w.member);
    expect((await claimed(anyPool, 'cpu')).job.data.pool).toBe('cpu');
    expectError(await anyPool.get(`/entities/Shot/${w.open.shot.id}`), 403, 'forbidden');

    // Site sync: claim and report are agent routes.
    const code = 'agents';
    await site(code);
    const rep = await create(w.admin.api, 'Representation', { project_id: w.open.project.id, data: { name: 'agent-rep', version: link(w.open.version) } });
    expectStatus(await w.admin.api.post('/sitesync/requests', { representation_ids: [rep.id], site: code }), 200);
    const [state] = expectStatus(await agent.post('/sitesync/claim', { site: code, agent: 'box-2' }), 200, 'agent sitesync claim').items;
    expect(state.representation_id).toBe(rep.id);
    expectStatus(await agent.post(`/sitesync/state/${rep.id}/${code}`, { lease: state.lease, status: 'synced' }), 200, 'agent report');
    expectError(await agent.patch(`/sitesync/state/${rep.id}/${code}`, { status: 'queued' }), 403, 'forbidden');
  });
});
