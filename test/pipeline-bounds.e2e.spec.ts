/**
 * The bounds and write rules of the pipeline routes through the gateway, against the whole stack: the
 * farm's caps and its chunk list in pages however large the outputs (docs/farm.md, "Bounds"); a sync
 * import held to the login rule of POST /entities/User and refusing FarmJobs (docs/api-notes.md,
 * "Sync"); batches crossing each other on the same records (docs/api-notes.md, "Batches"); and the
 * changes feed carrying records' own events only, not site-sync ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, type Api } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectValidation } from './support/expect.helpers.js';

/** The largest output a chunk keeps: 64 KiB of compact JSON. */
const OUTPUT_BYTES = 64 * 1024;
const largest = { log: 'x'.repeat(OUTPUT_BYTES - 10) };

describe('pipeline bounds (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let artist: Session;
  let agent: Api;
  let projectId: string;

  beforeAll(async () => {
    e = await startE2EStack('pipeline-bounds');
    admin = await bootstrapAdmin(e.api);
    artist = await createUser(admin.api, 'Artist', 'ana@studio.test');
    agent = e.api.as(expectStatus(await artist.api.post('/auth/api-keys', { name: 'agents' }), 200).token as string);
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Bounds', code: 'bounds' } }), 200).id;
  }, 180_000);
  afterAll(async () => {
    await e?.teardown();
  });

  const submit = async (body: Record<string, unknown>) =>
    expectStatus(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'comp', kind: 'render', ...body }), 200, 'POST /farm/jobs');

  it('farm: frames, chunks and outputs past their caps are 422s at the field; chunks of the largest outputs list in pages, none a 500', async () => {
    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', frames: '1-1000000', chunk_size: 10 }), [
      'body',
      'frames',
    ]);
    expectValidation(await artist.api.post('/farm/jobs', { project_id: projectId, name: 'x', kind: 'render', frames: '1-10001', chunk_size: 1 }), [
      'body',
      'frames',
    ]);
    expect((await submit({ pool: 'caps', frames: '1-100000', chunk_size: 10 })).data.chunks_total).toBe(10_000);

    const count = 80;
    const job = await submit({ pool: 'outputs', frames: `1-${count}`, chunk_size: 1 });
    for (let i = 0; i < count; i++) {
      const { chunk } = expectStatus(await agent.post('/farm/claim', { pool: 'outputs', worker: 'host-1' }), 200, 'claim');
      if (i === 0) {
        const over = await agent.post(`/farm/chunks/${chunk.id}/complete`, { lease: chunk.lease, output: { log: 'x'.repeat(OUTPUT_BYTES - 9) } });
        expectValidation(over, ['body', 'output']);
        expect(over.body.detail[0]).toMatchObject({ loc: ['body', 'output'], type: 'too_large' });
      }
      expectStatus(await agent.post(`/farm/chunks/${chunk.id}/complete`, { lease: chunk.lease, output: largest }), 200, 'complete');
    }

    // 80 outputs of 64 KiB are 5 MiB: more than one page holds, whatever limit asks for.
    const seen: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=500' : `?limit=500&cursor=${encodeURIComponent(cursor)}`;
      const page = expectStatus(await admin.api.get(`/farm/jobs/${job.id}/chunks${query}`), 200, 'a page of chunks');
      expect(page.items.length).toBeGreaterThan(0);
      seen.push(...page.items);
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBeGreaterThan(1);
    expect(seen.map((c) => c.index)).toEqual([...Array(count).keys()]);
    expect(seen.every((c) => c.state === 'done' && c.output.log === largest.log)).toBe(true);
    expectValidation(await admin.api.get(`/farm/jobs/${job.id}/chunks?limit=501`), ['query', 'limit']);
    expectValidation(await admin.api.get(`/farm/jobs/${job.id}/chunks?cursor=not-ours`), ['query', 'cursor']);
    const small = await submit({ pool: 'caps', frames: '1-150', chunk_size: 1 });
    const first = expectStatus(await admin.api.get(`/farm/jobs/${small.id}/chunks`), 200);
    expect([first.items.length, typeof first.next_cursor]).toEqual([100, 'string']);
  }, 120_000);

  it('sync import: a User whose email differs only in case from a login, and a FarmJob, are 422s at the item; nothing is written', async () => {
    const users = async () => expectStatus(await admin.api.post('/entities/User/query', { filters: [], limit: 100 }), 200).items.length as number;
    const before = await users();
    const res = await admin.api.post('/sync/import', {
      source: 'sg',
      items: [
        { external_id: '70', entity_type: 'Project', data: { name: 'Pilot', code: 'pilot' } },
        { external_id: '42', entity_type: 'User', data: { name: 'Ana again', email: 'ANA@Studio.test', role: 'Artist' } },
        { external_id: '9', entity_type: 'FarmJob', project_external_id: '70', status: 'done', data: { name: 'fake', kind: 'render' } },
      ],
    });
    expectValidation(res, ['body', 'items', 1, 'data', 'email']);
    expectValidation(res, ['body', 'items', 2, 'entity_type']);
    expect(res.body.detail.find((d: any) => d.loc.join() === 'body,items,1,data,email').type).toBe('duplicate_code');
    expect(expectStatus(await admin.api.get('/sync/mappings?source=sg'), 200).items).toEqual([]);
    expect(await users()).toBe(before);
    // The same User with an address of its own is created, stored as a login address is.
    const ok = expectStatus(
      await admin.api.post('/sync/import', {
        source: 'sg',
        items: [{ external_id: '42', entity_type: 'User', data: { name: 'Ann', email: ' Ann@Studio.test' } }],
      }),
      200,
    );
    expect(expectStatus(await admin.api.get(`/entities/User/${ok.items[0].id}`), 200).data.email).toBe('ann@studio.test');
  });

  it('batches updating A then B and B then A at once all commit: no 500, no deadlock reaches the client', async () => {
    const a = expectStatus(await artist.api.post('/entities/Shot', { project_id: projectId, data: { code: 'A' } }), 200).id as string;
    const b = expectStatus(await artist.api.post('/entities/Shot', { project_id: projectId, data: { code: 'B' } }), 200).id as string;
    const update = (id: string, description: string) => ({ request_type: 'update', entity_type: 'Shot', entity_id: id, data: { description } });
    const statuses: number[] = [];
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, k) =>
          artist.api.post('/batch', {
            requests: k % 2 === 0 ? [update(a, `r${round}k${k}`), update(b, `r${round}k${k}`)] : [update(b, `r${round}k${k}`), update(a, `r${round}k${k}`)],
          }),
        ),
      );
      statuses.push(...answers.map((r) => r.status));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('GET /sync/changes carries record events (FarmJob included), not the SiteSync event of a request made after the cursor', async () => {
    const after = await lastEventId(admin.api);
    const rep = expectStatus(await artist.api.post('/entities/Representation', { project_id: projectId, data: { name: 'plate' } }), 200).id as string;
    expectStatus(await admin.api.call('PUT', '/sitesync/sites/paris', { body: { name: 'Paris', kind: 'studio' } }), 200);
    expectStatus(await artist.api.post('/sitesync/requests', { representation_ids: [rep], site: 'paris' }), 200);
    const job = await submit({ pool: 'changes' });
    // Every event of these writes is in the log before the feed is read.
    await eventually(
      async () => {
        const types = (await eventsAfter(admin.api, after)).map((ev) => ev.entity_type);
        return types.includes('SiteSync') && types.includes('FarmJob') && types.includes('Representation') ? types : undefined;
      },
      15_000,
      'the SiteSync, FarmJob and Representation events',
    );
    const items: any[] = [];
    let cursor = after;
    for (;;) {
      const page = expectStatus(await admin.api.get(`/sync/changes?after=${cursor}&limit=100`), 200);
      items.push(...page.items);
      if (page.next_after === cursor) break;
      cursor = page.next_after;
    }
    expect(items.map((i) => i.entity_type)).not.toContain('SiteSync');
    expect(items.map((i) => [i.entity_type, i.id])).toEqual(
      expect.arrayContaining([
        ['Representation', rep],
        ['FarmJob', job.id],
      ]),
    );
    expect(items.filter((i) => i.id === rep).map((i) => i.action)).toEqual(['create']);
  });
});
