/**
 * Query planning and the query service without a database: order keys and the keyset condition,
 * cursors tied to their query, limits, projection, and who may query (Guests not; retired records
 * for Admins only). What the SQL matches is shown in test/query.int.spec.ts.
 */
import { AppError, type CallContext } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { encodeCursor, planQuery, RecordQueries } from './record.query.js';
import { compileSchema, type SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import type { RecordQueryStore } from './core.ports.js';
import { type QueryPlan } from './core.ports.js';
import { projectReadableSql, readableSql } from '../../kernel/store/project.readers.sql.js';

/** The reader rule as the store gives it to plans. */
const READERS = { readable: readableSql, projectReadable: projectReadableSql };

const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: [
    {
      code: 'Shot',
      project_scoped: true,
      fields: [
        { code: 'code', type: 'text' },
        { code: 'cut_in', type: 'integer' },
        { code: 'tags', type: 'multi_enum', options: [{ code: 'red' }] },
      ],
    },
  ],
  statuses: [],
  steps: [],
  priorities: [],
};
const schema = compileSchema(1, SNAPSHOT);

const invalidLocs = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError && err.kind === 'invalid') return err.problems.map((p) => p.loc);
    throw err;
  }
  throw new Error('no problem');
};

describe('planQuery', () => {
  it('orders by id alone by default and binds the type as $1', () => {
    const { plan } = planQuery(schema, { entityType: 'Shot' });
    expect(plan.orderBy).toBe('r.id asc');
    expect(plan.params).toEqual(['Shot']);
    expect(plan.where).toBe('r.entity_type = $1::text and (true) and r.retired_at is null');
    expect(plan.limit).toBe(100);
  });

  it('a nullable key orders as (is null, value) and id follows the last direction', () => {
    const { plan } = planQuery(schema, { entityType: 'Shot', order: [{ field: 'cut_in', direction: 'desc' }] });
    expect(plan.orderBy).toMatch(/^\(\(case .* end\) is null\) desc, \(case .* end\) desc, r\.id desc$/);
    expect(plan.keys).toHaveLength(2);
  });

  it('a cursor becomes "after this row" with its values bound, and belongs to one query only', () => {
    const order = [{ field: 'code' }];
    const { fingerprint } = planQuery(schema, { entityType: 'Shot', order });
    const cursor = encodeCursor({ k: ["x'; drop", '0190a000-0000-7000-8000-0000000000b1'], o: fingerprint });
    const { plan } = planQuery(schema, { entityType: 'Shot', order, cursor });
    expect(plan.params).toEqual(['Shot', "x'; drop", '0190a000-0000-7000-8000-0000000000b1']);
    expect(plan.where).not.toContain('drop');
    expect(plan.where).toContain('r.id > $3::uuid');
    expect(invalidLocs(() => planQuery(schema, { entityType: 'Shot', cursor }))).toEqual([['cursor']]);
    expect(invalidLocs(() => planQuery(schema, { entityType: 'Shot', order, cursor: 'bm90IGpzb24' }))).toEqual([['cursor']]);
    expect(invalidLocs(() => planQuery(schema, { entityType: 'Shot', order, cursor: 'a+b/' }))).toEqual([['cursor']]);
  });

  it('a cursor at a missing value moves on only through the null flag and the id', () => {
    const order = [{ field: 'code' }];
    const { fingerprint } = planQuery(schema, { entityType: 'Shot', order });
    const cursor = encodeCursor({ k: [null, '0190a000-0000-7000-8000-0000000000b1'], o: fingerprint });
    const { plan } = planQuery(schema, { entityType: 'Shot', order, cursor });
    expect(plan.params).toEqual(['Shot', '0190a000-0000-7000-8000-0000000000b1']);
    expect(plan.where).toContain('is null) > true');
    expect(plan.where).toContain('is not distinct from null and r.id > $2::uuid');
  });

  it('limits, fields and order keys are checked and located', () => {
    expect(
      invalidLocs(() =>
        planQuery(schema, {
          entityType: 'Shot',
          limit: 0,
          fieldsJson: '["code", 3, "nope", "status"]',
          order: [{ field: 'tags' }, { field: 'x' }, { field: 'id', direction: 'sideways' }],
        }),
      ),
    ).toEqual([['fields', 1], ['fields', 2], ['order', 0, 'field'], ['order', 1, 'field'], ['order', 2, 'direction'], ['limit']]);
    expect(invalidLocs(() => planQuery(schema, { entityType: 'Shot', limit: 1001 }))).toEqual([['limit']]);
    expect(invalidLocs(() => planQuery(schema, { entityType: 'Shot', filtersJson: '[' }))).toEqual([['filters']]);
    expect(planQuery(schema, { entityType: 'Shot', fieldsJson: '["code", "status"]' }).fields).toEqual(['code']);
  });

  it('include_retired drops the live-only condition', () => {
    expect(planQuery(schema, { entityType: 'Shot', includeRetired: true }).plan.where).not.toContain('retired_at');
  });
});

const row = (id: string, data: Record<string, unknown>): string =>
  JSON.stringify({ id, entity_type: 'Shot', project_id: null, status: null, active: true, data });

/** A store holding `rows` whose stored schema is SNAPSHOT at `version` (the stored version can move). */
class FakeStore implements RecordQueryStore {
  readonly readers = READERS;
  plans: QueryPlan[] = [];
  loads = 0;
  version = 1;
  snapshot: SchemaSnapshot = SNAPSHOT;
  constructor(private readonly rows: string[]) {}
  async query(plan: QueryPlan) {
    this.plans.push(plan);
    return {
      rows: this.rows.slice(0, plan.limit).map((r) => ({ json: r, keys: [(JSON.parse(r) as { id: string }).id] })),
      schemaVersion: this.version,
      total: plan.includeTotal ? this.rows.length : undefined,
    };
  }
  async loadSchema() {
    this.loads++;
    return { version: this.version, snapshot: this.snapshot };
  }
  async schemaVersion() {
    return this.version;
  }
}

const ctx = (role: 'Admin' | 'Artist' | 'Viewer' | 'Guest'): CallContext => ({
  requestId: 'r',
  principal: { userId: role === 'Guest' ? '' : '0190a000-0000-7000-8000-0000000000c1', role, authKind: role === 'Guest' ? 'guest' : 'token' },
});

describe('RecordQueries', () => {
  const rows = ['a', 'b', 'c'].map((c, i) => row(`0190a000-0000-7000-8000-00000000000${i}`, { code: c, cut_in: i }));

  it('fetches one row more than the limit to know whether a next page exists, and projects fields', async () => {
    const store = new FakeStore(rows);
    const q = new RecordQueries(store);
    const page = await q.query({ entityType: 'Shot', limit: 2, fieldsJson: '["code"]', includeTotal: true }, ctx('Viewer'));
    expect(store.plans[0]!.limit).toBe(3);
    // The projection is SQL over `data` with the field list bound, never written into the statement.
    expect(store.plans[0]!.data).toContain(`any($${store.plans[0]!.params.length + 1}::text[])`);
    expect(store.plans[0]!.dataParams).toEqual([['code']]);
    expect(page.items).toEqual(rows.slice(0, 2));
    expect(page.total).toBe(3);
    expect(page.nextCursor).toBeTruthy();
    const all = await q.query({ entityType: 'Shot', limit: 3 }, ctx('Viewer'));
    expect(all.nextCursor).toBeNull();
    expect(all.total).toBeUndefined();
  });

  it('any signed-in role queries; Guests do not; include_retired is Admin only; an unknown type is 404', async () => {
    const q = new RecordQueries(new FakeStore(rows));
    const kind = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (e instanceof AppError ? e.kind : 'other'),
      );
    expect(await kind(q.query({ entityType: 'Shot' }, ctx('Viewer')))).toBe('ok');
    expect(await kind(q.query({ entityType: 'Shot' }, ctx('Guest')))).toBe('forbidden');
    expect(await kind(q.query({ entityType: 'Shot', includeRetired: true }, ctx('Artist')))).toBe('forbidden');
    expect(await kind(q.query({ entityType: 'Shot', includeRetired: true }, ctx('Admin')))).toBe('ok');
    expect(await kind(q.query({ entityType: 'Asset' }, ctx('Admin')))).toBe('not_found');
  });

  it('plans against the held schema and plans again when the statement saw a newer stored one', async () => {
    const store = new FakeStore(rows);
    const q = new RecordQueries(store);
    expect((await q.query({ entityType: 'Shot', order: [{ field: 'cut_in' }] }, ctx('Viewer'))).items).toHaveLength(3);
    expect(store.loads).toBe(1);
    expect(store.plans).toHaveLength(1);
    // cut_in becomes a text field in version 2: the statement reports 2, the query is planned again by it.
    store.version = 2;
    store.snapshot = { ...SNAPSHOT, version: 2, entity_types: [{ ...SNAPSHOT.entity_types[0]!, fields: [{ code: 'cut_in', type: 'text' }] }] };
    await q.query({ entityType: 'Shot', order: [{ field: 'cut_in' }] }, ctx('Viewer'));
    expect(store.loads).toBe(2);
    expect(store.plans).toHaveLength(3);
    expect(store.plans[1]!.orderBy).toContain('numeric');
    expect(store.plans[2]!.orderBy).not.toContain('numeric');
    // A field the held schema lacks is confirmed against the stored version before a 422.
    store.version = 3;
    store.snapshot = { ...SNAPSHOT, version: 3, entity_types: [{ ...SNAPSHOT.entity_types[0]!, fields: [{ code: 'fps', type: 'float' }] }] };
    expect((await q.query({ entityType: 'Shot', filtersJson: '[["fps", "greater_than", 24]]' }, ctx('Viewer'))).items).toHaveLength(3);
    expect(store.loads).toBe(3);
    const err = await q.query({ entityType: 'Shot', filtersJson: '[["nope", "is", 1]]' }, ctx('Viewer')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('invalid');
    expect(store.loads).toBe(3);
  });
});
