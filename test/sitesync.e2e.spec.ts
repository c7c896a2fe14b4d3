/**
 * Site sync through the gateway against the whole stack (docs/api-notes.md, "Site sync";
 * docs/sitesync.md): sites, requests, pages and summaries, agents claiming and reporting under
 * leases (run out by moving them into the past with SQL), PATCH, the SiteSync events in the log,
 * and 5,000 states claimed by 32 concurrent agents, each synced exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { newId } from '@reelbase/lib-platform';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';

describe('site sync (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let viewer: Session;
  let supervisor: Session;
  /** An API key of the artist: what agents run with. */
  let agent: Api;
  let sql: pg.Client;
  let projectId: string;
  let otherProjectId: string;

  beforeAll(async () => {
    e = await startE2EStack('sitesync', { records: { SITESYNC_SWEEP_MS: '300' } });
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    viewer = await createUser(admin.api, 'Viewer', 'vi@studio.test');
    supervisor = await createUser(admin.api, 'Supervisor', 'sue@studio.test');
    const key = expectStatus(await artist.api.post('/auth/api-keys', { name: 'sync agent' }), 200, 'issue key');
    agent = e.api.as(key.token);
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Sync', code: 'sync' } }), 200).id;
    otherProjectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Other', code: 'other' } }), 200).id;
    sql = new pg.Client({ connectionString: e.db.url });
    await sql.connect();
  }, 180_000);
  afterAll(async () => {
    await sql?.end();
    await e?.teardown();
  });

  async function reps(n: number, project = projectId, concurrency = 8): Promise<string[]> {
    const out: string[] = new Array(n);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, async () => {
        for (let i = next++; i < n; i = next++) {
          out[i] = expectStatus(await artist.api.post('/entities/Representation', { project_id: project, data: { name: `rep${i}` } }), 200, 'create rep').id;
        }
      }),
    );
    // In id order (UUID v7: creation order), the order a claim takes states of one request in.
    return out.sort();
  }

  let siteN = 0;
  async function site(kind = 'remote'): Promise<string> {
    const code = `site-${++siteN}`;
    expectStatus(await admin.api.call('PUT', `/sitesync/sites/${code}`, { body: { name: `Site ${siteN}`, kind } }), 200, 'put site');
    return code;
  }

  const claim = async (code: string, body: Record<string, unknown> = {}, api = agent) =>
    expectStatus(await api.post('/sitesync/claim', { site: code, agent: 'box-1', ...body }), 200, 'claim').items as any[];
  const report = (rep: string, code: string, body: Record<string, unknown>, api = agent) => api.post(`/sitesync/state/${rep}/${code}`, body);
  const expire = (rep: string, code: string) =>
    sql.query(`update records.sitesync_state set lease_expires_at = clock_timestamp() - interval '1 second' where representation_id = $1 and site = $2`, [
      rep,
      code,
    ]);
  const stateOf = async (rep: string, code: string) => {
    const items = expectStatus(await viewer.api.get(`/sitesync/state?representation_id=${rep}&site=${code}`), 200).items as any[];
    return items[0];
  };
  /** The SiteSync events about a representation after event `after`, once `n` of them are in the log. */
  const syncEvents = (rep: string, n: number, after = 0) =>
    eventually(
      async () => {
        const found = (await eventsAfter(viewer.api, after, '&entity_type=SiteSync')).filter((ev) => ev.entity_id === rep);
        return found.length >= n ? found : undefined;
      },
      15_000,
      `${n} SiteSync events of ${rep}`,
    );

  it('sites: Admin creates, changes and deletes them; anyone reads; 409 code_in_use while states name one', async () => {
    const put = await admin.api.call('PUT', '/sitesync/sites/paris', { body: { name: 'Paris', kind: 'studio', root: '/mnt/paris' } });
    expect(expectStatus(put, 200)).toMatchObject({ code: 'paris', name: 'Paris', kind: 'studio', root: '/mnt/paris', id: expect.any(String) });
    const changed = expectStatus(await admin.api.call('PUT', '/sitesync/sites/paris', { body: { name: 'Paris HQ', kind: 'studio' } }), 200);
    expect(changed).toMatchObject({ name: 'Paris HQ', root: null, id: put.body.id });
    expect(expectStatus(await viewer.api.get('/sitesync/sites'), 200).items.map((s: any) => s.code)).toContain('paris');
    expectError(await supervisor.api.call('PUT', '/sitesync/sites/lyon', { body: { name: 'Lyon', kind: 'remote' } }), 403, 'forbidden');
    expectError(await supervisor.api.delete('/sitesync/sites/paris'), 403, 'forbidden');
    expectValidation(await admin.api.call('PUT', '/sitesync/sites/Not%20A%20Code', { body: { name: 'x', kind: 'moon' } }), ['path', 'code']);
    expectValidation(await admin.api.call('PUT', '/sitesync/sites/lyon', { body: { name: 'x', kind: 'moon' } }), ['body', 'kind']);

    const [rep] = await reps(1);
    expect(expectStatus(await artist.api.post('/sitesync/requests', { representation_ids: [rep], site: 'paris' }), 200)).toEqual({ queued: 1, unchanged: 0 });
    const inUse = await admin.api.delete('/sitesync/sites/paris');
    expectError(inUse, 409, 'code_in_use');
    expect(inUse.body.usage).toBe(1);
    expectStatus(await artist.api.patch(`/sitesync/state/${rep}/paris`, { status: 'removed' }), 200);
    expectError(await admin.api.delete('/sitesync/sites/paris'), 409, 'code_in_use'); // removed states still name it
    await sql.query(`delete from records.sitesync_state where site = 'paris'`);
    expect(expectStatus(await admin.api.delete('/sitesync/sites/paris'), 200).code).toBe('paris');
    expectError(await admin.api.delete('/sitesync/sites/paris'), 404, 'not_found');
    const siteEvents = await eventually(async () => {
      const found = (await eventsAfter(viewer.api, 0, '&entity_type=SiteSync')).filter((ev) => ev.entity_id === put.body.id);
      return found.length >= 3 ? found : undefined;
    });
    expect(siteEvents.map((ev) => ev.action)).toEqual(['create', 'update', 'delete']);
  });

  it('requests queue what is not queued, in progress or synced there; unknown ids and sites are 422; Viewers 403', async () => {
    const code = await site();
    const ids = await reps(5);
    const ask = (body: Record<string, unknown>, api = artist.api) => api.post('/sitesync/requests', body);
    expect(expectStatus(await ask({ representation_ids: ids.slice(0, 3), site: code, priority: 70 }), 200)).toEqual({ queued: 3, unchanged: 0 });
    expect(expectStatus(await ask({ representation_ids: ids, site: code }), 200)).toEqual({ queued: 2, unchanged: 3 });
    const claimed = await claim(code, { limit: 2 });
    expectStatus(await report(claimed[1].representation_id, code, { lease: claimed[1].lease, status: 'synced' }), 200);
    expectStatus(await artist.api.patch(`/sitesync/state/${ids[2]}/${code}`, { status: 'paused' }), 200);
    expectStatus(await artist.api.patch(`/sitesync/state/${ids[3]}/${code}`, { status: 'removed' }), 200);
    // queued (ids[4]), in_progress, synced: unchanged; paused, removed: queued again
    expect(expectStatus(await ask({ representation_ids: ids, site: code, priority: 10 }), 200)).toEqual({ queued: 2, unchanged: 3 });
    expect(await stateOf(ids[2]!, code)).toMatchObject({ status: 'queued', priority: 10 });
    expect(await stateOf(ids[4]!, code)).toMatchObject({ status: 'queued', priority: 50 });

    const bad = await ask({ representation_ids: [ids[0], '0190a0b0-0000-7000-8000-0000000000ff', projectId], site: 'nowhere' });
    expectValidation(bad, ['body', 'representation_ids', 1]);
    expectValidation(bad, ['body', 'representation_ids', 2]);
    expectValidation(bad, ['body', 'site']);
    expectValidation(await ask({ representation_ids: [], site: code, extra: 1 }), ['body', 'extra']);
    expectError(await ask({ representation_ids: [ids[0]], site: code }, viewer.api), 403, 'forbidden');
  });

  it('claims: that site only, highest priority then oldest, at most limit, each once; nothing due: {"items": []}', async () => {
    const code = await site();
    const other = await site();
    const ids = await reps(6);
    await artist.api.post('/sitesync/requests', { representation_ids: [ids[0], ids[1]], site: code, priority: 10 });
    await artist.api.post('/sitesync/requests', { representation_ids: [ids[2]], site: code, priority: 90 });
    await artist.api.post('/sitesync/requests', { representation_ids: [ids[3], ids[4]], site: code });
    await artist.api.post('/sitesync/requests', { representation_ids: [ids[5]], site: other, priority: 100 });
    const first = await claim(code, { limit: 3, lease_seconds: 60 });
    expect(first.map((c) => c.representation_id)).toEqual([ids[2], ids[3], ids[4]]);
    for (const c of first) {
      expect(c).toMatchObject({ status: 'in_progress', site: code, agent: 'box-1', project_id: projectId, lease: expect.stringMatching(/^ssl_/) });
      expect(Date.parse(c.lease_expires_at) - Date.now()).toBeGreaterThan(50_000);
    }
    // Two agents on one API key are told apart by their leases.
    const second = await claim(code, { agent: 'box-2' });
    expect(second.map((c) => c.representation_id)).toEqual([ids[0], ids[1]]);
    expectStatus(await report(ids[0]!, code, { lease: first[0].lease, status: 'in_progress' }), 409);
    expect(expectStatus(await agent.post('/sitesync/claim', { site: code, agent: 'box-3' }), 200)).toEqual({ items: [] });
    expectValidation(await agent.post('/sitesync/claim', { site: 'nowhere', agent: 'box' }), ['body', 'site']);
    expectValidation(await agent.post('/sitesync/claim', { site: code, agent: 'box', limit: 101 }), ['body', 'limit']);
    expectValidation(await agent.post('/sitesync/claim', { site: code, agent: 'box', lease_seconds: 9 }), ['body', 'lease_seconds']);
    expectError(await viewer.api.post('/sitesync/claim', { site: code, agent: 'box' }), 403, 'forbidden');
    expect((await claim(other)).map((c) => c.representation_id)).toEqual([ids[5]]);
  });

  it('reports: in_progress extends the lease (no event), synced finishes; failed re-queues with an attempt, the 5th leaves it failed', async () => {
    const code = await site();
    const [a, b] = await reps(2);
    await artist.api.post('/sitesync/requests', { representation_ids: [a, b], site: code });
    const [ca] = await claim(code, { limit: 1, lease_seconds: 30 });
    expect(ca.representation_id).toBe(a);
    await syncEvents(a!, 2); // queued, in_progress: in the log before `before` is taken
    const before = await lastEventId(viewer.api);
    await sql.query(`update records.sitesync_state set lease_expires_at = clock_timestamp() + interval '2 seconds' where representation_id = $1`, [a]);
    const progress = expectStatus(await report(a!, code, { lease: ca.lease, status: 'in_progress', progress: 0.25, size: 100, total_size: 400 }), 200);
    expect(progress).toMatchObject({ status: 'in_progress', progress: 0.25, size: 100, total_size: 400 });
    expect(Date.parse(progress.lease_expires_at) - Date.now()).toBeGreaterThan(20_000);
    const synced = expectStatus(await report(a!, code, { lease: ca.lease, status: 'synced', size: 400 }), 200);
    expect(synced).toMatchObject({ status: 'synced', progress: 1, size: 400, lease_expires_at: null, error: null });
    const after = await syncEvents(a!, 1, before);
    expect(after.map((ev) => ev.changes.status)).toEqual(['synced']); // the progress report wrote none
    expect(after[0]).toMatchObject({ entity_type: 'SiteSync', action: 'update', project_id: projectId, actor: artist.user.id });
    expectError(await report(a!, code, { lease: ca.lease, status: 'in_progress' }), 409, 'lease_lost');

    for (let attempt = 1; attempt <= 5; attempt++) {
      const [c] = await claim(code, { limit: 1 });
      expect(c).toMatchObject({ representation_id: b, attempts: attempt - 1 });
      const s = expectStatus(await report(b!, code, { lease: c.lease, status: 'failed', error: `checksum mismatch ${attempt}` }), 200);
      expect(s).toMatchObject({ status: attempt < 5 ? 'queued' : 'failed', attempts: attempt, error: `checksum mismatch ${attempt}` });
    }
    expect(await claim(code)).toEqual([]);
    expectValidation(await report(b!, code, { lease: 'x', status: 'paused', progress: 2 }), ['body', 'status']);
    expectError(await report('0190a0b0-0000-7000-8000-0000000000ff', code, { lease: 'x', status: 'synced' }), 404, 'not_found');
    expectError(await report(b!, code, { lease: 'x', status: 'synced' }, viewer.api), 403, 'forbidden');
  });

  it('a run-out lease is 409 lease_lost and counts an attempt; lost leases are claimed again; the 5th loss leaves it failed', async () => {
    const code = await site();
    const [rep] = await reps(1);
    await artist.api.post('/sitesync/requests', { representation_ids: [rep], site: code });
    const [c1] = await claim(code);
    await expire(rep!, code);
    expectError(await report(rep!, code, { lease: c1.lease, status: 'synced' }), 409, 'lease_lost');
    expect(await stateOf(rep!, code)).toMatchObject({ status: 'queued', attempts: 1, lease_expires_at: null });
    for (let attempt = 2; attempt <= 5; attempt++) {
      // A claim skips a state the sweeper holds while it lapses it: claim until it comes back.
      const c = await eventually(async () => (await claim(code, { agent: `box-${attempt}` }))[0]);
      expect(c.attempts).toBe(attempt - 1);
      await expire(rep!, code);
    }
    // The sweeper (every 300 ms here) finalises the 5th loss without a claim.
    const failed = await eventually(async () => {
      const s = await stateOf(rep!, code);
      return s.status === 'failed' ? s : undefined;
    });
    expect(failed).toMatchObject({ attempts: 5, lease_expires_at: null });
    expect(await claim(code)).toEqual([]);
    const statuses = (await syncEvents(rep!, 11)).map((ev) => ev.changes.status);
    expect(statuses).toEqual([
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'queued',
      'in_progress',
      'failed',
    ]);
  });

  it('PATCH pauses, queues again or removes, ending a held lease; paused only from queued or in_progress', async () => {
    const code = await site();
    const [rep] = await reps(1);
    await artist.api.post('/sitesync/requests', { representation_ids: [rep], site: code });
    const [c] = await claim(code);
    const path = `/sitesync/state/${rep}/${code}`;
    expect(expectStatus(await artist.api.patch(path, { status: 'paused', priority: 80 }), 200)).toMatchObject({
      status: 'paused',
      priority: 80,
      lease_expires_at: null,
    });
    expectError(await report(rep!, code, { lease: c.lease, status: 'synced' }), 409, 'lease_lost');
    expect(await claim(code)).toEqual([]);
    expectStatus(await artist.api.patch(path, { status: 'queued' }), 200);
    const [again] = await claim(code);
    expect(again).toMatchObject({ priority: 80, attempts: 0 });
    expectStatus(await supervisor.api.patch(path, { status: 'removed' }), 200);
    expectError(await report(rep!, code, { lease: again.lease, status: 'in_progress' }), 409, 'lease_lost');
    expectError(await artist.api.patch(path, { status: 'paused' }), 409, 'transition_not_allowed');
    expectValidation(await artist.api.patch(path, { status: 'synced' }), ['body', 'status']);
    expectError(await artist.api.patch(`/sitesync/state/0190a0b0-0000-7000-8000-0000000000ff/${code}`, { status: 'queued' }), 404, 'not_found');
    expectError(await viewer.api.patch(path, { status: 'queued' }), 403, 'forbidden');
    const statuses = (await syncEvents(rep!, 6)).map((ev) => ev.changes.status);
    expect(statuses).toEqual(['queued', 'in_progress', 'paused', 'queued', 'in_progress', 'removed']);
  });

  it('state pages filter by project, site, status and representation and page with an opaque cursor; the summary counts', async () => {
    const code = await site();
    const other = await site();
    const a = await reps(5);
    const b = await reps(3, otherProjectId);
    await artist.api.post('/sitesync/requests', { representation_ids: [...a, ...b], site: code });
    await artist.api.post('/sitesync/requests', { representation_ids: a.slice(0, 2), site: other });
    await claim(code, { limit: 2 });
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/sitesync/state?site=${code}&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: any = expectStatus(await viewer.api.get(q), 200);
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.map((s) => s.representation_id)).toEqual([...a, ...b].sort());
    const proj = expectStatus(await viewer.api.get(`/sitesync/state?project_id=${otherProjectId}`), 200).items as any[];
    expect(proj.map((s) => s.representation_id).sort()).toEqual([...b].sort());
    const sites = expectStatus(await viewer.api.get(`/sitesync/state?representation_id=${a[0]}`), 200).items as any[];
    expect(sites.map((s) => s.site).sort()).toEqual([code, other].sort());
    expect(expectStatus(await viewer.api.get(`/sitesync/state?site=${code}&status=in_progress`), 200).items).toHaveLength(2);
    expectValidation(await viewer.api.get('/sitesync/state?cursor=bogus'), ['query', 'cursor']);
    expectValidation(await viewer.api.get('/sitesync/state?status=done&limit=1001'), ['query', 'status']);
    expect(expectStatus(await viewer.api.get(`/sitesync/summary?site=${code}`), 200)).toEqual({
      counts: { queued: 6, in_progress: 2, synced: 0, failed: 0, paused: 0, removed: 0 },
    });
    const byProject = expectStatus(await viewer.api.get(`/sitesync/summary?project_id=${otherProjectId}`), 200).counts;
    expect(Object.values(byProject).reduce((x: number, y) => x + (y as number), 0)).toBe(3);
  });

  it('5,000 states claimed by 32 concurrent agents through the gateway: every one synced exactly once, none handed out twice', async () => {
    const total = 5000;
    const agents = 32;
    const code = await site('cloud');
    const t0 = Date.now();
    // The Representations are written straight into records' table (5,000 creates through the API
    // would test creates, not sync); everything after that goes through the gateway.
    const ids = Array.from({ length: total }, () => newId());
    await sql.query(
      `insert into records.record (id, entity_type, project_id, created_by, created_at, updated_at, data)
       select id, 'Representation', $2, $3, clock_timestamp(), clock_timestamp(), jsonb_build_object('name', 'bulk') from unnest($1::uuid[]) id`,
      [ids, projectId, artist.user.id],
    );
    const tCreated = Date.now();
    for (let i = 0; i < total; i += 1000) {
      const res = expectStatus(await artist.api.post('/sitesync/requests', { representation_ids: ids.slice(i, i + 1000), site: code }), 200, 'request');
      expect(res).toEqual({ queued: 1000, unchanged: 0 });
    }
    const tQueued = Date.now();
    const claimedBy = new Map<string, string[]>();
    const refused: string[] = [];
    let claims = 0;
    await Promise.all(
      Array.from({ length: agents }, async (_, a) => {
        const name = `agent-${a}`;
        for (;;) {
          const got = await claim(code, { agent: name, limit: 20 });
          claims++;
          if (got.length === 0) return;
          for (const c of got) claimedBy.set(c.representation_id, [...(claimedBy.get(c.representation_id) ?? []), name]);
          // One request at a time per agent: 32 in flight, what the records pool serves without queueing for long.
          for (const c of got) {
            const res = await report(c.representation_id, code, { lease: c.lease, status: 'synced', size: 1, total_size: 1 });
            if (res.status !== 200) refused.push(`${c.representation_id} ${res.status} ${res.text}`);
          }
        }
      }),
    );
    const tDone = Date.now();
    expect(refused).toEqual([]);
    expect(claimedBy.size).toBe(total);
    expect([...claimedBy.values()].filter((by) => by.length !== 1)).toEqual([]);
    expect(new Set(ids)).toEqual(new Set(claimedBy.keys()));
    expect(expectStatus(await viewer.api.get(`/sitesync/summary?site=${code}`), 200).counts).toEqual({
      queued: 0,
      in_progress: 0,
      synced: total,
      failed: 0,
      paused: 0,
      removed: 0,
    });
    const lost = await sql.query(`select count(*)::int as n from records.sitesync_state where site = $1 and attempts <> 0`, [code]);
    expect(lost.rows[0].n).toBe(0);
    // The log agrees: one in_progress and one synced event per state (read through the API once all are in).
    await eventually(
      async () => {
        const n = await sql.query(
          `select count(*)::int as n from events.event_log where entity_type = 'SiteSync' and changes->>'site' = $1 and changes->>'status' = 'synced'`,
          [code],
        );
        return n.rows[0].n >= total ? true : undefined;
      },
      60_000,
      'every synced event in the log',
    );
    const perRep = new Map<string, string[]>();
    for (const ev of await eventsAfter(viewer.api, 0, '&entity_type=SiteSync')) {
      if (ev.changes.site !== code || ev.changes.status === undefined || ev.changes.status === 'queued') continue;
      perRep.set(ev.entity_id, [...(perRep.get(ev.entity_id) ?? []), ev.changes.status]);
    }
    expect(perRep.size).toBe(total);
    expect([...perRep.values()].filter((s) => s.join() !== 'in_progress,synced')).toEqual([]);
    console.log(
      `[sitesync] ${total} representations written in ${tCreated - t0} ms, queued in ${tQueued - tCreated} ms; ` +
        `${agents} agents: ${claims} claims + ${total} reports in ${tDone - tQueued} ms (${Math.round((total * 1000) / (tDone - tQueued))} states/s)`,
    );
  }, 240_000);

  it('GET /events?entity_type=SiteSync lists the changes; every route is in the OpenAPI document', async () => {
    const events = await eventsAfter(viewer.api, 0, '&entity_type=SiteSync');
    expect(events.length).toBeGreaterThan(10);
    expect(events.every((ev) => ev.entity_type === 'SiteSync')).toBe(true);
    const doc = expectStatus(await e.api.get('/openapi.json'), 200);
    for (const [p, m] of [
      ['/sitesync/sites/{code}', 'put'],
      ['/sitesync/sites', 'get'],
      ['/sitesync/sites/{code}', 'delete'],
      ['/sitesync/requests', 'post'],
      ['/sitesync/state', 'get'],
      ['/sitesync/summary', 'get'],
      ['/sitesync/claim', 'post'],
      ['/sitesync/state/{representation_id}/{site}', 'post'],
      ['/sitesync/state/{representation_id}/{site}', 'patch'],
    ] as const) {
      expect(doc.paths[p]?.[m], `${m} ${p}`).toBeDefined();
    }
  });
  it('records killed with SIGKILL while agents claim: after its restart every state still ends synced exactly once', async () => {
    const total = 1000;
    const code = await site('cloud');
    const ids = Array.from({ length: total }, () => newId());
    await sql.query(
      `insert into records.record (id, entity_type, project_id, created_by, created_at, updated_at, data)
       select id, 'Representation', $2, $3, clock_timestamp(), clock_timestamp(), '{}'::jsonb from unnest($1::uuid[]) id`,
      [ids, projectId, artist.user.id],
    );
    expectStatus(await artist.api.post('/sitesync/requests', { representation_ids: ids, site: code }), 200, 'request');
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const syncedOk = new Map<string, number>();
    let reports = 0;
    let failures = 0;
    let killed: Promise<void> | undefined;
    const summary = async () => {
      const res = await viewer.api.get(`/sitesync/summary?site=${code}`).catch(() => undefined);
      return res?.status === 200 ? (res.body.counts as Record<string, number>) : undefined;
    };
    const deadline = Date.now() + 120_000;
    await Promise.all(
      Array.from({ length: 16 }, async (_, a) => {
        while (Date.now() < deadline) {
          const res = await agent.post('/sitesync/claim', { site: code, agent: `agent-${a}`, limit: 10, lease_seconds: 10 }).catch(() => undefined);
          if (res?.status !== 200) {
            failures++;
            await sleep(200);
            continue;
          }
          const got = res.body.items as any[];
          if (got.length === 0) {
            if ((await summary())?.synced === total) return;
            await sleep(300); // states held by lost leases come back when their lease runs out
            continue;
          }
          for (const c of got) {
            const r = await report(c.representation_id, code, { lease: c.lease, status: 'synced' }).catch(() => undefined);
            if (r?.status === 200) syncedOk.set(c.representation_id, (syncedOk.get(c.representation_id) ?? 0) + 1);
            else failures++;
            if (++reports === 300 && !killed) {
              killed = (async () => {
                await e.stack.kill('records', 'SIGKILL');
                await sleep(1000);
                await e.stack.restart('records');
              })();
            }
          }
        }
      }),
    );
    await killed;
    expect(failures).toBeGreaterThan(0); // the kill was felt
    // States claimed before the kill whose reports never arrived came back when their lease ran out.
    const lapsed = await sql.query(`select count(*)::int as n from records.sitesync_state where site = $1 and attempts > 0`, [code]);
    expect(lapsed.rows[0].n).toBeGreaterThan(0);
    expect(await summary()).toEqual({ queued: 0, in_progress: 0, synced: total, failed: 0, paused: 0, removed: 0 });
    // No state was reported synced twice with success, and the log holds exactly one synced event per state.
    expect([...syncedOk.values()].filter((n) => n !== 1)).toEqual([]);
    const synced = await eventually(
      async () => {
        const r = await sql.query(
          `select entity_id, count(*)::int as n from events.event_log
            where entity_type = 'SiteSync' and changes->>'site' = $1 and changes->>'status' = 'synced' group by entity_id`,
          [code],
        );
        return r.rows.length === total ? r.rows : undefined;
      },
      60_000,
      'one synced event per state',
    );
    expect(synced.filter((row) => row.n !== 1)).toEqual([]);
  }, 240_000);
});
