/**
 * The hostile probe's checks of the pipeline routes' bounds and write rules (docs/farm.md, "Bounds";
 * docs/api-notes.md, "Sync" and "Batches"): frame lists, chunk counts and chunk outputs past their caps;
 * a job's chunk list paged while every chunk holds the largest output; a sync import of a User whose
 * email differs only in case from a login, and of a FarmJob; batches crossing each other on the same
 * records; and the changes feed after a site-sync request. Every answer goes through the probe's `send`
 * (a 5xx or a broken error shape is counted there); rule breaches are counted as problems here.
 */
import { parseAnswer as parse, probeCalls, type Answer, type ProbeContext, type Secrets } from './hostile.calls.js';

/** The largest output a chunk keeps: 64 KiB of compact JSON. */
const OUTPUT_BYTES = 64 * 1024;
/** Chunks completed with the largest output: more than one 4 MiB page of them. */
const LARGE_CHUNKS = 80;

export async function probePipeline(ctx: ProbeContext): Promise<Secrets> {
  const { problem } = ctx;
  const { call, expect } = probeCalls(ctx);
  const admin = ctx.adminToken;
  const pid = ctx.projectId;
  const job = (label: string, body: Record<string, unknown>) =>
    call(label, 'POST', '/farm/jobs', admin, { project_id: pid, name: 'hostile', kind: 'render', ...body });

  ctx.log('pipeline: frame lists, chunk counts and outputs past their caps');
  expect(await job('a million frames in 100,000 chunks', { frames: '1-1000000', chunk_size: 10 }), [422], 'a job of a million frames');
  expect(await job('10,001 chunks', { frames: '1-10001', chunk_size: 1 }), [422], 'a job of 10,001 chunks');
  expect(await job('frames up to 100,000,000 by 1', { frames: '1-100000000' }), [422], 'a frame range of 100,000,000');
  expect(await job('a frame list of 10,001 characters', { frames: `1${',1'.repeat(5_000)}` }), [422], 'a frame list of 10,001 characters');
  expect(
    await job('4,000 ranges of 25 frames', { frames: Array.from({ length: 4_000 }, (_, i) => `${i * 100}-${i * 100 + 24}`).join(',') }),
    [422],
    '100,000+ frames in ranges',
  );

  const large = parse(await job('a job for the largest outputs', { pool: 'hostile-outputs', frames: `1-${LARGE_CHUNKS}`, chunk_size: 1 }));
  let lease = '';
  const output = { log: 'x'.repeat(OUTPUT_BYTES - 10) };
  for (let i = 0; i < LARGE_CHUNKS; i++) {
    const claimed = parse(await call('claim a chunk', 'POST', '/farm/claim', admin, { pool: 'hostile-outputs', worker: 'hostile' }));
    const chunk = claimed?.chunk as { id: string; lease: string } | undefined;
    if (!chunk) {
      problem(`claim ${i} of ${LARGE_CHUNKS} handed out nothing`);
      break;
    }
    lease ||= chunk.lease;
    if (i === 0) {
      const done = `/farm/chunks/${chunk.id}/complete`;
      expect(
        await call('an output one byte past 64 KiB', 'POST', done, admin, { lease: chunk.lease, output: { log: `${output.log}x` } }),
        [422],
        'an output one byte past 64 KiB',
      );
      expect(
        await call('an output of 2 MiB', 'POST', done, admin, { lease: chunk.lease, output: { log: 'x'.repeat(2 * 1024 * 1024) } }),
        [413],
        'an output of 2 MiB',
      );
      // Under 64 K characters, over 64 KiB of JSON: two-byte characters, and control characters written as \u0001.
      expect(
        await call('an output of 40,000 two-byte characters', 'POST', done, admin, { lease: chunk.lease, output: 'é'.repeat(40_000) }),
        [422],
        'an output of 80,000 bytes in 40,000 characters',
      );
      expect(
        await call('an output of 12,000 control characters', 'POST', done, admin, { lease: chunk.lease, output: '\u0001'.repeat(12_000) }),
        [422],
        'an output of 72,000 bytes once escaped',
      );
    }
    expect(
      await call('complete with the largest output', 'POST', `/farm/chunks/${chunk.id}/complete`, admin, { lease: chunk.lease, output }),
      [200],
      'completing a chunk with a 64 KiB output',
    );
  }

  ctx.log('pipeline: the chunk list of the largest outputs, page by page');
  let cursor: string | null = null;
  let listed = 0;
  let pages = 0;
  do {
    const query: string = cursor === null ? '?limit=500' : `?limit=500&cursor=${encodeURIComponent(cursor)}`;
    const page = expect(await call('a page of large chunks', 'GET', `/farm/jobs/${large?.id}/chunks${query}`, admin), [200], 'a page of chunks');
    if (!page) break;
    listed += (page.items as unknown[]).length;
    cursor = page.next_cursor as string | null;
    pages += 1;
  } while (cursor !== null && pages < LARGE_CHUNKS);
  if (listed !== LARGE_CHUNKS || pages < 2)
    problem(`the chunk list gave ${listed} of ${LARGE_CHUNKS} chunks in ${pages} pages (expected every chunk, over 2 pages or more)`);
  for (const q of ['?limit=501', '?limit=0', '?limit=abc', '?cursor=not-ours', `?cursor=${Buffer.from('["chunk",-1]').toString('base64url')}`]) {
    expect(await call(`chunk list ${q}`, 'GET', `/farm/jobs/${large?.id}/chunks${q}`, admin), [422], `the chunk list with ${q}`);
  }

  ctx.log('pipeline: sync import of a login in another case and of a FarmJob');
  const imported = await call('import a case-variant login and a FarmJob', 'POST', '/sync/import', admin, {
    source: 'hostile',
    items: [
      { external_id: 'p', entity_type: 'Project', data: { name: 'Imported', code: 'imported' } },
      { external_id: 'u', entity_type: 'User', data: { name: 'Shadow admin', email: 'ADMIN@Hostile.Test', role: 'Admin' } },
      { external_id: 'j', entity_type: 'FarmJob', project_external_id: 'p', status: 'done', data: { name: 'fake', kind: 'render' } },
    ],
  });
  const refused = expect(imported, [422], 'an import of a case-variant login and a FarmJob');
  const locs = ((refused?.detail ?? []) as { loc: unknown[] }[]).map((d) => d.loc.join('.'));
  for (const want of ['body.items.1.data.email', 'body.items.2.entity_type'])
    if (!locs.includes(want)) problem(`the import's 422 does not name ${want} (${locs.join(' ')})`);
  const mapped = expect(
    await call('mappings after the refused import', 'GET', '/sync/mappings?source=hostile', admin),
    [200],
    'mappings after a refused import',
  );
  if ((mapped?.items ?? []).length !== 0) problem(`a refused import wrote ${mapped.items.length} mappings`);
  const shadow = expect(
    await call('Users after the refused import', 'POST', '/entities/User/query', admin, {
      filters: [['email', 'in', ['ADMIN@Hostile.Test', 'admin@hostile.test']]],
    }),
    [200],
    "Users holding the Admin's login address",
  );
  if ((shadow?.items ?? []).length !== 1) problem(`${shadow?.items?.length} Users hold the Admin's login address after the refused import`);

  ctx.log('pipeline: batches crossing each other on the same records');
  const a = parse(await call('shot A', 'POST', '/entities/Shot', admin, { project_id: pid, data: { code: 'XA' } }))?.id as string;
  const b = parse(await call('shot B', 'POST', '/entities/Shot', admin, { project_id: pid, data: { code: 'XB' } }))?.id as string;
  const update = (id: string, d: string) => ({ request_type: 'update', entity_type: 'Shot', entity_id: id, data: { description: d } });
  const statuses = new Map<number, number>();
  for (let round = 0; round < 10; round++) {
    const answers: Answer[] = await Promise.all(
      Array.from({ length: 6 }, (_, k) =>
        call('crossing batch', 'POST', '/batch', admin, {
          requests: k % 2 ? [update(a, `${round}${k}`), update(b, `${round}${k}`)] : [update(b, `${round}${k}`), update(a, `${round}${k}`)],
        }),
      ),
    );
    for (const ans of answers) statuses.set(ans.status, (statuses.get(ans.status) ?? 0) + 1);
  }
  for (const [status, n] of statuses) if (status !== 200) problem(`${n} crossing batches answered ${status}`);

  ctx.log('pipeline: the changes feed after a site-sync request');
  const last = parse(await call('the newest event', 'GET', '/events?limit=1', admin))?.items?.[0]?.id ?? 0;
  const rep = parse(await call('a Representation', 'POST', '/entities/Representation', admin, { project_id: pid, data: { name: 'plate' } }))?.id;
  expect(await call('a site', 'PUT', '/sitesync/sites/hostile', admin, { name: 'Hostile', kind: 'remote' }), [200], 'a site');
  expect(await call('a site-sync request', 'POST', '/sitesync/requests', admin, { representation_ids: [rep], site: 'hostile' }), [200], 'a site-sync request');
  let logged = false;
  for (let i = 0; i < 50 && !logged; i++) {
    const evs = parse(await call('SiteSync events', 'GET', `/events?after=${last}&entity_type=SiteSync`, admin));
    logged = (evs?.items ?? []).length > 0;
    if (!logged) await new Promise((r) => setTimeout(r, 200));
  }
  if (!logged) problem('the site-sync request wrote no SiteSync event within 10 s');
  const changes = expect(await call('changes after a site-sync request', 'GET', `/sync/changes?after=${last}&limit=1000`, admin), [200], 'the changes feed');
  const types = ((changes?.items ?? []) as { entity_type: string }[]).map((i) => i.entity_type);
  if (types.includes('SiteSync')) problem('GET /sync/changes carried a SiteSync item');
  if (!types.includes('Representation')) problem(`GET /sync/changes left out the Representation written after the cursor (${types.join(' ')})`);

  return { farm_lease: lease };
}
