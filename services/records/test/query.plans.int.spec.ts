/**
 * Query indexes and the statement timeout against PostgreSQL (docs/queries.md, "Query
 * indexes"): the plan of each common query shape uses the index made for it, and a query
 * statement that runs past QUERY_TIMEOUT_MS is cancelled and answered `unavailable` /
 * `query_timeout` instead of holding the caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId, queryText, type CallContext, type GrpcClient } from '@reelbase/lib-platform';
import { appErrorOf, type TestDatabase } from '@reelbase/lib-testkit';
import { recordsv1 } from '@reelbase/proto';
import pg from 'pg';
import { planQuery, type PlanOptions, type QueryInput } from '../src/core/domain/record.query.js';
import { compileSchema } from '../src/kernel/domain/schema.snapshot.js';
import { queryStatements } from '../src/core/store/query.repository.js';
import { openQueryPool } from '../src/core/store/query.pool.js';
import { querySnapshot, startRecordsWorld, text, type RecordsWorld } from './records.world.js';

const asService: CallContext = { requestId: 'qp-svc', principal: { userId: '', role: 'Service', authKind: 'service' } };
const asViewer: CallContext = { requestId: 'qp-viewer', principal: { userId: newId(), role: 'Viewer', authKind: 'token' } };

const SNAPSHOT = querySnapshot([
  { code: 'Project', project_scoped: false, fields: [text('name'), text('code')] },
  { code: 'User', project_scoped: false, fields: [text('name')] },
  { code: 'Sequence', project_scoped: true, fields: [text('code')] },
  { code: 'Shot', project_scoped: true, fields: [text('code'), { code: 'sequence', type: 'link', link_types: ['Sequence'] }] },
  {
    code: 'Task',
    project_scoped: true,
    fields: [text('name'), { code: 'entity', type: 'link', link_types: ['Shot'] }, { code: 'assignees', type: 'multi_link', link_types: ['User'] }],
  },
]);
const schema = compileSchema(1, SNAPSHOT);
// Short enough to test the cancellation, long enough that the plan tests' queries never meet it on a
// busy machine.
const TIMEOUT_MS = 2000;

let world: RecordsWorld;
let db: TestDatabase;
let sql: pg.Client;
let client: GrpcClient<recordsv1.RecordsServiceClient>;

beforeAll(async () => {
  world = await startRecordsWorld('qplans', { QUERY_TIMEOUT_MS: String(TIMEOUT_MS) });
  ({ db, client, sql } = world);
  await client.call.applySchema({ version: 1, snapshotJson: JSON.stringify(SNAPSHOT) }, asService);
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

describe('statement timeout', () => {
  it('a query statement running past QUERY_TIMEOUT_MS is cancelled: unavailable / query_timeout, quickly, and the next query works', async () => {
    const lock = new pg.Client({ connectionString: db.url });
    await lock.connect();
    try {
      // The table locked by another session: the query's statement waits, and statement_timeout counts the wait.
      await lock.query('begin');
      await lock.query('lock table records.record in access exclusive mode');
      const t0 = performance.now();
      const err = await appErrorOf(
        client.call.queryRecords(recordsv1.QueryRecordsRequest.fromPartial({ entityType: 'Shot', filtersJson: '[["code", "is", "x"]]', order: [] }), asViewer),
      );
      const ms = performance.now() - t0;
      expect(err.kind).toBe('unavailable');
      expect(err.code).toBe('query_timeout');
      expect(err.message).toContain(`${TIMEOUT_MS} ms`);
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      // Cancelled at the timeout, not held until the lock is released.
      expect(ms).toBeLessThan(TIMEOUT_MS + 5000);
      await lock.query('rollback');
      const ok = await client.call.queryRecords(
        recordsv1.QueryRecordsRequest.fromPartial({ entityType: 'Shot', filtersJson: '[["code", "is", "x"]]', order: [] }),
        asViewer,
      );
      expect(ok.items).toEqual([]);
    } finally {
      await lock.end();
    }
  });

  it('the query pool is read-only and cuts statements off at its timeout', async () => {
    const pool = openQueryPool({ databaseUrl: db.url, timeoutMs: 200, max: 1 });
    try {
      const write = await queryText(
        pool,
        "insert into records.applied_rename (journal_id, kind, from_code, to_code, rewritten) values ('x', 'status', 'a', 'b', 0)",
      ).catch((e: { code?: string }) => e);
      expect((write as { code?: string }).code).toBe('25006'); // read_only_sql_transaction
      const slow = await queryText(pool, 'select pg_sleep(1)').catch((e: { code?: string }) => e);
      expect((slow as { code?: string }).code).toBe('57014'); // query_canceled
    } finally {
      await pool.destroy();
    }
  });
});

describe('plans of the common shapes', () => {
  let projectId = '';
  let sequenceId = '';
  let shotId = '';
  let userId = '';

  beforeAll(async () => {
    // 8 projects × (4 Sequences, 500 Shots, 2,000 Tasks), 40 Users: ~20,000 records.
    const id = `(lpad(to_hex((extract(epoch from now()) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3) || '8' || substr(md5(random()::text), 1, 15))::uuid`;
    const ins = 'insert into records.record (id, entity_type, project_id, status, created_at, updated_at, data)';
    await sql.query(`${ins} select ${id}, 'User', null, null, now(), now(), jsonb_build_object('name', 'u' || u) from generate_series(1, 40) u`);
    await sql.query(`${ins} select ${id}, 'Project', null, null, now(), now(), jsonb_build_object('code', 'p' || p) from generate_series(1, 8) p`);
    await sql.query(`${ins} select ${id}, 'Sequence', p.id, 'ip', now(), now(), jsonb_build_object('code', 'SQ0' || q || '0')
      from records.record p, generate_series(1, 4) q where p.entity_type = 'Project'`);
    await sql.query(`${ins} select ${id}, 'Shot', s.project_id, (array['wtg', 'ip', 'fin'])[1 + k % 3], now(), now(),
        jsonb_build_object('code', 'SH' || lpad(k::text, 4, '0') || '_' || (s.data->>'code'), 'sequence', jsonb_build_object('type', 'Sequence', 'id', s.id))
      from records.record s, generate_series(1, 125) k where s.entity_type = 'Sequence'`);
    await sql.query(`${ins} select ${id}, 'Task', s.project_id, (array['wtg', 'ip', 'fin'])[1 + (k + n) % 3], now(), now(),
        jsonb_build_object('name', (array['layout', 'anim', 'light', 'comp'])[k], 'entity', jsonb_build_object('type', 'Shot', 'id', s.id),
          'assignees', jsonb_build_array(jsonb_build_object('type', 'User', 'id', (select u.id from records.record u where u.entity_type = 'User' order by u.id offset (n % 40) limit 1))))
      from (select r.*, row_number() over (order by id) as n from records.record r where r.entity_type = 'Shot') s, generate_series(1, 4) k`);
    await sql.query('vacuum analyze records.record');
    await sql.query('vacuum analyze records.record_link');
    const pick = async (q: string) => (await sql.query<{ id: string }>(q)).rows[0]!.id;
    projectId = await pick("select id from records.record where entity_type = 'Project' order by id limit 1");
    sequenceId = await pick(`select id from records.record where entity_type = 'Sequence' and project_id = '${projectId}' limit 1`);
    shotId = await pick(`select id from records.record where entity_type = 'Shot' and project_id = '${projectId}' limit 1`);
    userId = await pick("select id from records.record where entity_type = 'User' limit 1");
  }, 120_000);

  /** The plan of the page statement records runs for `input` (one row past the limit, as records asks). */
  async function planOf(input: QueryInput, statement: 'page' | 'count' = 'page', options: PlanOptions = {}): Promise<string> {
    const { plan } = planQuery(schema, input, options);
    const st = queryStatements({ ...plan, limit: plan.limit + 1 })[statement]!;
    const res = await sql.query<{ 'QUERY PLAN': string }>(`explain ${st.text}`, st.values);
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  }
  const q = (entityType: string, filters: unknown, more: Partial<QueryInput> = {}): QueryInput => ({
    entityType,
    filtersJson: JSON.stringify(filters),
    limit: 50,
    ...more,
  });

  it('type + project + status: the (entity_type, status, project_id, id) index, in order, no sort', async () => {
    const p = await planOf(
      q('Task', [
        ['project_id', 'is', projectId],
        ['status', 'is', 'ip'],
      ]),
    );
    expect(p).toContain('record_live_type_status_project_idx');
    expect(p).not.toMatch(/Seq Scan on record|Sort/);
  });

  it('include_total over a status counts from the same index', async () => {
    const p = await planOf(q('Task', [['status', 'is', 'fin']], { includeTotal: true }), 'count');
    expect(p).toContain('record_live_type_status_project_idx');
  });

  it('data-field equality, link equality (reverse lookup) and multi_link containment: the GIN index on data', async () => {
    expect(await planOf(q('Shot', [['code', 'is', 'SH0007_SQ020']]))).toContain('record_live_data_idx');
    expect(await planOf(q('Task', [['entity', 'is', { type: 'Shot', id: shotId }]]))).toMatch(/record_live_data_idx/);
    expect(
      await planOf(
        q('Task', [
          ['assignees', 'in', [{ type: 'User', id: userId }]],
          ['name', 'is', 'comp'],
        ]),
      ),
    ).toMatch(/record_live_data_idx|record_task_assignees_idx/);
  });

  it('a 2-hop link filter walks the link indexes, never the whole table', async () => {
    // Innermost first over the link table: the Shots of the Sequences by (link, to_id), index-only.
    const hops = await planOf(q('Task', [['entity.Shot.sequence.Sequence.id', 'is', sequenceId]]));
    expect(hops).toMatch(/Index Only Scan using record_link_to_idx on record_link/);
    expect(hops).not.toContain('Seq Scan on record');
    // Its EXISTS form (the fallback past the cap): from a known Sequence, its Shots come from the link expression index.
    expect(await planOf(q('Task', [['entity.Shot.sequence.Sequence.id', 'is', sequenceId]]), 'page', { linkHops: false })).toContain(
      'record_link_shot_sequence_idx',
    );
    const withProject = await planOf(
      q('Task', [
        ['project_id', 'is', projectId],
        ['entity.Shot.sequence.Sequence.code', 'is', 'SQ020'],
      ]),
    );
    expect(withProject).not.toContain('Seq Scan on record');
    // Within the pinned project: the project's Task links by (link, project_id), index-only.
    expect(withProject).toMatch(/Index Only Scan using record_link_project_idx on record_link/);
  });

  it('a hop page walks its id set in id order and stops at the limit', async () => {
    // 125 Shots of SQ020 in the project, 4 Tasks each: 500 matches, of which the page reads 51 (limit + 1).
    const { plan } = planQuery(
      schema,
      q('Task', [
        ['project_id', 'is', projectId],
        ['entity.Shot.sequence.Sequence.code', 'is', 'SQ020'],
      ]),
    );
    const st = queryStatements({ ...plan, limit: plan.limit + 1 }).page;
    const res = await sql.query<{ 'QUERY PLAN': unknown }>(`explain (analyze, format json) ${st.text}`, st.values);
    type Node = { 'Relation Name'?: string; Alias?: string; 'Actual Rows': number; 'Actual Loops': number; Plans?: Node[] };
    const root = (res.rows[0]!['QUERY PLAN'] as { Plan: Node }[])[0]!.Plan;
    let read = 0;
    const visit = (n: Node) => {
      if (n['Relation Name'] === 'record' && n.Alias === 'r') read += n['Actual Rows'] * n['Actual Loops'];
      n.Plans?.forEach(visit);
    };
    visit(root);
    expect(read).toBe(51);
    const rows = await sql.query<{ j: string | null }>(st.text, st.values);
    expect(rows.rows.filter((r) => r.j !== null)).toHaveLength(51);
  });

  it('text contains on code: the trigram index', async () => {
    expect(await planOf(q('Shot', [['code', 'contains', '0042_sq0']]))).toContain('record_live_code_trgm_idx');
  });

  it('a keyset page of one project starts at the cursor in the (entity_type, project_id, id) index', async () => {
    const first = await client.call.queryRecords(
      recordsv1.QueryRecordsRequest.fromPartial({ entityType: 'Task', filtersJson: JSON.stringify([['project_id', 'is', projectId]]), order: [], limit: 100 }),
      asViewer,
    );
    expect(first.nextCursor).toBeTruthy();
    const p = await planOf(q('Task', [['project_id', 'is', projectId]], { limit: 100, cursor: first.nextCursor! }));
    expect(p).toContain('record_live_type_project_id_idx');
    expect(p).toMatch(/Index Cond: .*\(id > /);
    expect(p).not.toMatch(/Seq Scan on record|Sort/);
  });

  it('a cursor over a column order bounds the first key, so the page starts at the cursor', async () => {
    const first = await client.call.queryRecords(
      recordsv1.QueryRecordsRequest.fromPartial({ entityType: 'Task', filtersJson: '[]', order: [{ field: 'created_at', direction: 'desc' }], limit: 10 }),
      asViewer,
    );
    const { plan } = planQuery(schema, { entityType: 'Task', order: [{ field: 'created_at', direction: 'desc' }], limit: 10, cursor: first.nextCursor! });
    expect(plan.where).toMatch(/r\.created_at <= \$\d+::timestamptz$/);
  });
});
