/**
 * POST /entities/{entity_type}/query at the gateway: the body checked and passed on as one
 * QueryRecords call, the page answered as `{items, next_cursor, total?}`, any role, problems
 * located under `body`, and filter groups nested 8 deep passing the JSON guard.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../test/support/fakes.js';
import { httpClient } from '../../test/support/http.js';

let gw: TestGateway;
const call = httpClient(() => gw.url);
const PROJECT = '0190a0b0-0000-7000-8000-0000000000f1';

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

describe('POST /entities/{entity_type}/query', () => {
  it('passes the body on as one call and answers a page; Viewers may query', async () => {
    const shot = await call('POST', '/entities/Shot', { token: 'artist-token', body: { project_id: PROJECT, data: { code: 'sh010' } } });
    const filters = [['sequence.Sequence.code', 'is', 'SQ010'], { filter_operator: 'any', filters: [['code', 'contains', "'; --"]] }];
    const res = await call('POST', '/entities/Shot/query', {
      token: 'viewer-token',
      body: { filters, fields: ['code'], order: [{ field: 'code', direction: 'desc' }, { field: 'cut_in' }], limit: 5, include_total: true },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ items: [shot.json], next_cursor: 'next-page', total: 1 });
    const q = gw.state.calls.find((c) => c.method === 'queryRecords')!;
    expect(q.req).toMatchObject({
      entityType: 'Shot',
      filtersJson: JSON.stringify(filters),
      fieldsJson: '["code"]',
      order: [
        { field: 'code', direction: 'desc' },
        { field: 'cut_in', direction: 'asc' },
      ],
      limit: 5,
      includeTotal: true,
      includeRetired: false,
    });
    expect(q.ctx.principal).toMatchObject({ role: 'Viewer' });

    const last = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: [], cursor: 'next-page' } });
    expect(last.json).toEqual({ items: [shot.json], next_cursor: null });
    expect(gw.state.calls.filter((c) => c.method === 'queryRecords').at(-1)!.req).toMatchObject({
      cursor: 'next-page',
      limit: undefined,
      fieldsJson: undefined,
    });
  });

  it('refuses a malformed body before calling records, and locates records’ problems under body', async () => {
    for (const [body, loc] of [
      [{}, ['body', 'filters']],
      [{ filters: 'x' }, ['body', 'filters']],
      [{ filters: [], limit: 0 }, ['body', 'limit']],
      [{ filters: [], limit: 1001 }, ['body', 'limit']],
      [{ filters: [], order: [{ field: 'code', direction: 'up' }] }, ['body', 'order', 0, 'direction']],
      [{ filters: [], extra: true }, ['body', 'extra']],
      [{ filters: { filter_operator: 'some', filters: [] } }, ['body', 'filters']],
    ] as const) {
      const res = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(
        res.json.detail.some((d: { loc: unknown[] }) => loc.every((p, i) => d.loc[i] === p)),
        res.text,
      ).toBe(true);
    }
    expect(gw.state.calls.some((c) => c.method === 'queryRecords')).toBe(false);
    const located = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: [['nope', 'is', 1]] } });
    expect(located.status).toBe(422);
    expect(located.json.detail).toEqual([{ loc: ['body', 'filters', 0, 0], msg: 'Shot has no field nope', type: 'unknown_field' }]);
    expect((await call('POST', '/entities/Shot/query', { body: { filters: [] } })).status).toBe(401);
  });

  it('a query records cancelled at its statement timeout is 503 query_timeout with records’ message', async () => {
    const res = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: [['slow', 'is', 1]] } });
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({ code: 'query_timeout', detail: expect.stringContaining('4000 ms') });
  });

  it('filter groups nested 8 deep, with link values, pass the JSON guard', async () => {
    let f: unknown = [['sequence', 'is', { type: 'Sequence', id: PROJECT }]];
    for (let i = 0; i < 7; i++) f = [{ filter_operator: 'all', filters: f }];
    const res = await call('POST', '/entities/Shot/query', { token: 'viewer-token', body: { filters: f } });
    expect(res.status, res.text).toBe(200);
  });
});
