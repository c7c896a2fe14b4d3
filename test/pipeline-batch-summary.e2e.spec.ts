/**
 * Batches and summaries from pipeline code, end to end (docs/api-notes.md, "Batches",
 * "Summaries"): a batch is all or nothing, says which request failed, and its events are
 * consecutive in the log even while other writes run; summaries with 1-, 2- and 3-level groupings
 * on data made here; the bounds of both and the weight each has in the caller's rate limit.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { createUser, eventsAfter, lastEventId, type E2EStack, type Session } from './support/e2e.stack.js';
import { expectError, expectValidation } from './support/expect.helpers.js';
import { shotsWithCode, usePipelineStack } from './support/pipeline.stack.js';

const MISSING = '0190b3c4-0000-7000-8000-000000000000';

describe('pipeline calls: batches and summaries (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let projectId: string;
  usePipelineStack('pipeline-batch-summary', (s) => ({ e, admin, projectId } = s));

  describe('POST /batch', () => {
    it('writes creates, updates and deletes in order, answering each result', async () => {
      const existing = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'b000' } }), 200);
      const doomed = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'b001' } }), 200);
      const res = await admin.api.post('/batch', {
        requests: [
          { request_type: 'create', entity_type: 'Shot', project_id: projectId, data: { code: 'b010', cut_in: 1 } },
          { request_type: 'create', entity_type: 'Sequence', project_id: projectId, data: { code: 'bsq' } },
          { request_type: 'update', entity_type: 'Shot', entity_id: existing.id, data: { cut_in: 1001 } },
          { request_type: 'delete', entity_type: 'Shot', entity_id: doomed.id },
        ],
      });
      const { results } = expectStatus(res, 200, 'batch');
      expect(results).toHaveLength(4);
      expect(results[0]).toMatchObject({ entity_type: 'Shot', project_id: projectId, data: { code: 'b010', cut_in: 1 } });
      expect(results[1]).toMatchObject({ entity_type: 'Sequence', data: { code: 'bsq' } });
      expect(results[2]).toMatchObject({ id: existing.id, data: { code: 'b000', cut_in: 1001 } });
      expect(results[3]).toBe(true);
      expectError(await admin.api.get(`/entities/Shot/${doomed.id}`), 404, 'not_found');
      expect(expectStatus(await admin.api.get(`/entities/Shot/${results[0].id}`), 200)).toEqual(results[0]);
    });

    it('a bad request at index 3 writes nothing and says where', async () => {
      const before = await lastEventId(admin.api);
      const requests = [0, 1, 2, 3, 4].map((i) => ({
        request_type: 'create',
        entity_type: 'Shot',
        project_id: projectId,
        data: i === 3 ? { code: 'bad3', cut_in: 'not a number' } : { code: `bad${i}` },
      }));
      const res = await admin.api.post('/batch', { requests });
      expectValidation(res, ['body', 'requests', 3, 'data', 'cut_in']);
      for (const i of [0, 1, 2, 3, 4]) expect(await shotsWithCode(admin.api, projectId, `bad${i}`)).toHaveLength(0);

      // A request whose shape is wrong is located the same way, after the requests before it passed.
      const shape = await admin.api.post('/batch', {
        requests: [...requests.slice(0, 3), { request_type: 'upsert', entity_type: 'Shot', extra: 1 }],
      });
      expectValidation(shape, ['body', 'requests', 3]);
      expect(shape.body.detail.map((d: any) => d.loc.slice(0, 5))).toEqual(
        expect.arrayContaining([
          ['body', 'requests', 3, 'request_type'],
          ['body', 'requests', 3, 'extra'],
        ]),
      );

      // A 404 or 403 answers for the batch with the request's index.
      const missing = await admin.api.post('/batch', {
        requests: [requests[0], requests[1], { request_type: 'update', entity_type: 'Shot', entity_id: MISSING, data: { cut_in: 2 } }],
      });
      expectError(missing, 404, 'not_found');
      expect(missing.body.index).toBe(2);
      const viewer = await createUser(admin.api, 'Viewer', `viewer-${randomUUID().slice(0, 8)}@studio.test`);
      const refused = await viewer.api.post('/batch', {
        requests: [{ request_type: 'create', entity_type: 'Version', project_id: projectId, data: { code: 'v1' } }, requests[0]],
      });
      expectError(refused, 403, 'forbidden');
      expect(refused.body.index).toBe(1);
      for (const i of [0, 1]) expect(await shotsWithCode(admin.api, projectId, `bad${i}`)).toHaveLength(0);

      // Nothing reached the log: a marker write is the first event after `before`.
      const marker = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'bad-marker' } }), 200);
      const logged = await eventually(async () => {
        const all = await eventsAfter(admin.api, before);
        return all.some((ev) => ev.entity_id === marker.id) ? all : undefined;
      });
      // The viewer's registration writes a User event; no Shot or Version event but the marker's.
      expect(logged.filter((ev) => ev.entity_type === 'Shot' || ev.entity_type === 'Version').map((ev) => ev.entity_id)).toEqual([marker.id]);
    });

    it('the events of a batch are consecutive in the log while other writes run at the same time', async () => {
      const before = await lastEventId(admin.api);
      const size = 120;
      const singles = Array.from({ length: 30 }, (_, i) => admin.api.post('/entities/Shot', { project_id: projectId, data: { code: `side${i}` } }));
      const batches = [0, 1].map((b) =>
        admin.api.post('/batch', {
          requests: Array.from({ length: size }, (_, i) => ({
            request_type: 'create',
            entity_type: 'Shot',
            project_id: projectId,
            data: { code: `cons${b}_${i}` },
          })),
        }),
      );
      const [batchAnswers, singleAnswers] = await Promise.all([Promise.all(batches), Promise.all(singles)]);
      for (const s of singleAnswers) expectStatus(s, 200, 'single');
      const ids = batchAnswers.map((a) => new Set<string>(expectStatus(a, 200, 'batch').results.map((r: any) => r.id)));
      const logged = await eventually(async () => {
        const all = await eventsAfter(admin.api, before);
        const n = all.filter((ev) => ids.some((s) => s.has(ev.entity_id))).length;
        return n === size * 2 ? all : undefined;
      }, 30_000);
      for (const set of ids) {
        const mine = logged.filter((ev) => set.has(ev.entity_id)).map((ev) => ev.id as number);
        expect(mine).toHaveLength(size);
        expect(Math.max(...mine) - Math.min(...mine)).toBe(size - 1);
        // In request order too.
        const byEntity = logged.filter((ev) => set.has(ev.entity_id)).map((ev) => ev.entity_id);
        expect(byEntity).toEqual([...set]);
      }
    });
  });

  describe('POST /entities/{Type}/summarize', () => {
    let shotA: any;
    let shotB: any;
    const filters = () => [['project_id', 'is', projectId]];

    beforeAll(async () => {
      for (const code of ['anim', 'comp']) {
        const r = await admin.api.post('/schema/steps', { code, name: code });
        if (r.status !== 200) expectError(r, 409, 'duplicate_code');
      }
      shotA = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'sum010' } }), 200);
      shotB = expectStatus(await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: 'sum020' } }), 200);
      const task = (data: Record<string, unknown>) => ({ request_type: 'create', entity_type: 'Task', project_id: projectId, data });
      const a = { type: 'Shot', id: shotA.id };
      const b = { type: 'Shot', id: shotB.id };
      const made = expectStatus(
        await admin.api.post('/batch', {
          requests: [
            task({ name: 't1', entity: a, step: 'anim', estimate_minutes: 60, due_date: '2026-01-15' }),
            task({ name: 't2', entity: a, step: 'anim', estimate_minutes: 30, due_date: '2026-02-03' }),
            task({ name: 't3', entity: a, step: 'comp', estimate_minutes: 120, due_date: '2026-01-20' }),
            task({ name: 't4', entity: b, step: 'comp', estimate_minutes: 45, due_date: '2026-01-05' }),
            task({ name: 't5', entity: b, step: 'anim' }),
            task({ name: 't6', step: 'comp', estimate_minutes: 15, due_date: '2026-03-01' }),
            task({ name: 't7', entity: a, step: 'anim', estimate_minutes: 1000, due_date: '2026-01-01' }),
          ],
        }),
        200,
        'tasks',
      );
      // A retired task is left out of every summary.
      expectStatus(await admin.api.delete(`/entities/Task/${made.results[6].id}`), 200);
    });

    const summarize = (body: unknown) => admin.api.post('/entities/Task/summarize', body);

    it('summarizes every matching record with each summary type', async () => {
      const res = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [
            { field: 'id', type: 'record_count' },
            { field: 'estimate_minutes', type: 'sum' },
            { field: 'entity', type: 'count' },
            { field: 'due_date', type: 'earliest' },
            { field: 'updated_at', type: 'latest' },
            { field: 'step', type: 'status_list' },
            { field: 'name', type: 'minimum' },
            { field: 'priority', type: 'count' },
          ],
        }),
        200,
        'summaries',
      );
      expect(res.groups).toEqual([]);
      expect(res.summaries).toMatchObject({
        id: 6,
        estimate_minutes: 270,
        entity: 5,
        due_date: '2026-01-05',
        updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        step: ['anim', 'comp'],
        name: 't1',
        priority: 0,
      });
      const more = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [
            { field: 'estimate_minutes', type: 'average' },
            { field: 'due_date', type: 'latest' },
            { field: 'step', type: 'percentage', value: 'anim' },
            { field: 'name', type: 'maximum' },
          ],
        }),
        200,
      );
      expect(more.summaries).toEqual({ estimate_minutes: 54, due_date: '2026-03-01', step: 50, name: 't6' });
      const maxMin = expectStatus(
        await summarize({ filters: [...filters(), ['step', 'is', 'comp']], summary_fields: [{ field: 'estimate_minutes', type: 'maximum' }] }),
        200,
      );
      expect(maxMin.summaries).toEqual({ estimate_minutes: 120 });
    });

    it('groups one level exactly, by link and by month, the group without a value last', async () => {
      const bySteps = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [{ field: 'estimate_minutes', type: 'sum' }],
          grouping: [{ field: 'step', type: 'exact', direction: 'desc' }],
        }),
        200,
      );
      expect(bySteps.groups).toEqual([
        { group_name: 'comp', group_value: 'comp', summaries: { estimate_minutes: 180 } },
        { group_name: 'anim', group_value: 'anim', summaries: { estimate_minutes: 90 } },
      ]);
      const byShot = expectStatus(
        await summarize({ filters: filters(), summary_fields: [{ field: 'id', type: 'record_count' }], grouping: [{ field: 'entity', type: 'exact' }] }),
        200,
      );
      expect(byShot.groups).toEqual([
        { group_name: 'sum010', group_value: { type: 'Shot', id: shotA.id }, summaries: { id: 3 } },
        { group_name: 'sum020', group_value: { type: 'Shot', id: shotB.id }, summaries: { id: 2 } },
        { group_name: null, group_value: null, summaries: { id: 1 } },
      ]);
      const byMonth = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [{ field: 'id', type: 'record_count' }],
          grouping: [{ field: 'due_date', type: 'month', direction: 'desc' }],
        }),
        200,
      );
      expect(byMonth.groups.map((g: any) => [g.group_value, g.summaries.id])).toEqual([
        ['2026-03', 1],
        ['2026-02', 1],
        ['2026-01', 3],
        [null, 1],
      ]);
      const byWeek = expectStatus(
        await summarize({ filters: filters(), summary_fields: [{ field: 'id', type: 'record_count' }], grouping: [{ field: 'due_date', type: 'week' }] }),
        200,
      );
      expect(byWeek.groups[0]).toMatchObject({ group_value: '2026-W02', summaries: { id: 1 } });
    });

    it('groups two and three levels deep: by link, then exactly, then by month', async () => {
      const two = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [{ field: 'estimate_minutes', type: 'sum' }],
          grouping: [{ field: 'entity', type: 'exact' }, { field: 'step' }],
        }),
        200,
      );
      const shape = (groups: any[]): any[] => groups.map((g) => [g.group_name, g.summaries.estimate_minutes, ...(g.groups ? [shape(g.groups)] : [])]);
      expect(shape(two.groups)).toEqual([
        [
          'sum010',
          210,
          [
            ['anim', 90],
            ['comp', 120],
          ],
        ],
        [
          'sum020',
          45,
          [
            ['anim', 0],
            ['comp', 45],
          ],
        ],
        [null, 15, [['comp', 15]]],
      ]);
      const three = expectStatus(
        await summarize({
          filters: filters(),
          summary_fields: [{ field: 'estimate_minutes', type: 'sum' }],
          grouping: [{ field: 'entity', type: 'exact' }, { field: 'step' }, { field: 'due_date', type: 'month' }],
        }),
        200,
      );
      expect(shape(three.groups)).toEqual([
        [
          'sum010',
          210,
          [
            [
              'anim',
              90,
              [
                ['2026-01', 60],
                ['2026-02', 30],
              ],
            ],
            ['comp', 120, [['2026-01', 120]]],
          ],
        ],
        [
          'sum020',
          45,
          [
            ['anim', 0, [[null, 0]]],
            ['comp', 45, [['2026-01', 45]]],
          ],
        ],
        [null, 15, [['comp', 15, [['2026-03', 15]]]]],
      ]);
    });

    it('refuses what it cannot answer with the query language’s 422s', async () => {
      expectValidation(
        await summarize({
          filters: filters(),
          summary_fields: [
            { field: 'estimate_minutes', type: 'sum' },
            { field: 'estimate_minutes', type: 'average' },
          ],
        }),
        ['body', 'summary_fields', 1, 'field'],
      );
      expectValidation(await summarize({ filters: [['no_such_field', 'is', 1]], summary_fields: [{ field: 'id', type: 'record_count' }] }), [
        'body',
        'filters',
        0,
      ]);
      expectValidation(await summarize({ filters: filters(), summary_fields: [{ field: 'name', type: 'sum' }] }), ['body', 'summary_fields', 0, 'type']);
      expectValidation(await summarize({ filters: filters(), summary_fields: [{ field: 'step', type: 'percentage' }] }), [
        'body',
        'summary_fields',
        0,
        'value',
      ]);
      expectValidation(
        await summarize({ filters: filters(), summary_fields: [{ field: 'id', type: 'record_count' }], grouping: [{ field: 'name', type: 'month' }] }),
        ['body', 'grouping', 0, 'type'],
      );
      expectValidation(
        await summarize({
          filters: filters(),
          summary_fields: [{ field: 'id', type: 'record_count' }],
          grouping: [{ field: 'a' }, { field: 'b' }, { field: 'c' }, { field: 'd' }],
        }),
        ['body', 'grouping'],
      );
      expectError(
        await admin.api.post('/entities/NoSuchType/summarize', { filters: [], summary_fields: [{ field: 'id', type: 'record_count' }] }),
        404,
        'not_found',
      );
    });
  });

  describe('bounds', () => {
    it('a summary of more than 10,000 groups is 422 at grouping; a coarser grouping of the same records answers', async () => {
      const bulk = (await admin.api.post('/entities/Project', { data: { name: 'Bulk', code: 'bulk' } })).body.id as string;
      for (let b = 0; b < 21; b++) {
        const requests = Array.from({ length: 500 }, (_, j) => ({
          request_type: 'create',
          entity_type: 'Shot',
          project_id: bulk,
          data: { code: `g${b}_${j}`, cut_in: j % 4 },
        }));
        expectStatus(await admin.api.post('/batch', { requests }), 200, `batch ${b}`);
      }
      const body = (field: string) => ({
        filters: [['project_id', 'is', bulk]],
        summary_fields: [{ field: 'id', type: 'record_count' }],
        grouping: [{ field, type: 'exact' }],
      });
      const refused = await admin.api.post('/entities/Shot/summarize', body('code'));
      expectValidation(refused, ['body', 'grouping']);
      expect(refused.body.detail[0].type).toBe('too_many_groups');
      const coarse = expectStatus(await admin.api.post('/entities/Shot/summarize', body('cut_in')), 200, 'coarse');
      expect(coarse.summaries.id).toBe(10_500);
      expect(coarse.groups.map((g: any) => g.summaries.id)).toEqual([2625, 2625, 2625, 2625]);
    });

    it('a user holds at most 100 live API keys: one more is 409 limit_reached until one is revoked', async () => {
      const minter = await createUser(admin.api, 'Artist', `minter-${randomUUID().slice(0, 8)}@studio.test`);
      const keys: any[] = [];
      for (let i = 0; i < 100; i++) keys.push(expectStatus(await minter.api.post('/auth/api-keys', { name: `k${i}` }), 200, `key ${i}`));
      expectError(await minter.api.post('/auth/api-keys', { name: 'one too many' }), 409, 'limit_reached');
      expectStatus(await minter.api.delete(`/auth/api-keys/${keys[0].id}`), 200, 'revoke');
      expectStatus(await minter.api.post('/auth/api-keys', { name: 'in its place' }), 200, 'after a revoke');
    });
  });

  describe('request weights', () => {
    it('a batch counts its requests and a summary ten in the caller’s rate limit; a refused body one', async () => {
      // The last test of the file: the gateway again with a limit a test can reach (2 a second, 40 at once).
      await e.stack.restart('gateway', { RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '40' });
      const weigher = await createUser(admin.api, 'Artist', `weigher-${randomUUID().slice(0, 8)}@studio.test`);
      const requests = Array.from({ length: 35 }, (_, j) => ({ request_type: 'create', entity_type: 'Shot', project_id: projectId, data: { code: `w${j}` } }));
      expectStatus(await weigher.api.post('/batch', { requests }), 200, 'a batch of 35');
      // 5 left: a summary (10) is admitted on the first and borrows the rest.
      const summary = { filters: [['project_id', 'is', projectId]], summary_fields: [{ field: 'id', type: 'record_count' }] };
      expectStatus(await weigher.api.post('/entities/Shot/summarize', summary), 200, 'a summary');
      const refused = await weigher.api.get('/me');
      expectError(refused, 429, 'rate_limited');
      // 5 tokens short at 2 a second.
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(3);
      // Another user is not held back, and a batch whose shape is refused (501 requests) weighs one request only.
      const other = await createUser(admin.api, 'Artist', `other-${randomUUID().slice(0, 8)}@studio.test`);
      const tooMany = Array.from({ length: 501 }, () => requests[0]);
      expectValidation(await other.api.post('/batch', { requests: tooMany }), ['body', 'requests']);
      expectStatus(await other.api.get('/me'), 200, 'after a refused batch');
      await e.stack.restart('gateway');
    });
  });
});
