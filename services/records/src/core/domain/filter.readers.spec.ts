/**
 * The reader rule in the statements the domain writes (docs/queries.md, "Restricted projects"): a
 * caller who may not read every project gets the condition on the queried row and on every record a
 * filter's path goes through (EXISTS hops, link-hop id sets), its membership probe bound once; an
 * Admin's, a service's and a plan without a reader are the statements they always were. What the
 * SQL matches is shown against PostgreSQL in test/restricted.readers.int.spec.ts.
 */
import type { CallContext } from '@reelbase/lib-platform';
import { describe, expect, it } from 'vitest';
import { compileFilter, readerScope } from './filter.compiler.js';
import { planQuery, RecordQueries } from './record.query.js';
import { planSummary, RecordSummaries } from './record.summary.js';
import type { QueryPlan, RecordQueryStore, SummaryStatement, SummaryStore } from './core.ports.js';
import { compileSchema, type SchemaSnapshot } from '../../kernel/domain/schema.snapshot.js';
import { membershipProbe } from '../../kernel/domain/project.readers.js';
import { projectReadableSql, readableSql } from '../../kernel/store/project.readers.sql.js';

const USER = '0190a000-0000-7000-8000-0000000000c1';
const READERS = { readable: readableSql, projectReadable: projectReadableSql };
const reader = { userId: USER, sql: READERS };

const text = (code: string) => ({ code, type: 'text' as const });
const linking = (code: string, type: 'link' | 'multi_link', to: string) => ({ code, type, link_types: [to] });
const SNAPSHOT: SchemaSnapshot = {
  version: 1,
  entity_types: Object.entries({
    Sequence: [text('code')],
    Shot: [text('code'), linking('sequence', 'link', 'Sequence')],
    Task: [text('name'), linking('entity', 'link', 'Shot'), linking('assignees', 'multi_link', 'User')],
    User: [text('name')],
  }).map(([code, fields]) => ({ code, project_scoped: code !== 'User', fields })),
  statuses: [],
  steps: [],
  priorities: [],
};
const schema = compileSchema(1, SNAPSHOT);
const TWO_HOPS = '[["entity.Shot.sequence.Sequence.code", "is", "SQ030"]]';
const count = (text: string, part: string) => text.split(part).length - 1;

describe('compileFilter with a reader scope', () => {
  it('binds the membership probe once and puts the rule on every record an EXISTS hop goes through', () => {
    const params: unknown[] = ['Task'];
    const scope = readerScope(params, USER, READERS);
    expect(scope.probe).toBe('$2');
    expect(params).toEqual(['Task', membershipProbe(USER)]);
    const { sql } = compileFilter(schema, 'Task', JSON.parse(TWO_HOPS), params, undefined, scope);
    expect(sql).toContain(readableSql('h1', '$2'));
    expect(sql).toContain(readableSql('h2', '$2'));
    // The queried row's own condition is the plan's, not the filter's.
    expect(sql).not.toContain(readableSql('r', '$2'));
    // A negated path is the negation of the readable one: a link into a hidden project counts as empty.
    const negated = compileFilter(schema, 'Task', [['entity.Shot.code', 'is_not', 'x']], ['Task', 'p'], undefined, { probe: '$2', sql: READERS }).sql;
    expect(negated).toMatch(/^\(not exists \(.*coalesce\(h1\.project_id, h1\.id\) not in .*\)\)$/s);
  });

  it('puts the rule on the innermost id set and on every link step past the queried records', () => {
    const params: unknown[] = ['Task'];
    const scope = readerScope(params, USER, READERS);
    const c = compileFilter(schema, 'Task', JSON.parse(TWO_HOPS), params, { cap: 100 }, scope);
    const [seqs, shots, tasks] = [c.ctes![0]!, c.ctes![1]!, c.ctes![2]!];
    expect(seqs).toMatch(/^lh1_2 /);
    expect(seqs).toContain(readableSql('h1', '$2'));
    expect(shots).toMatch(/^lh1_1 /);
    expect(shots).toContain(projectReadableSql('coalesce(l.project_id, l.from_id)', '$2'));
    // The Tasks' own set: the page's predicate holds the rule for them.
    expect(tasks).toMatch(/^lh1_0 /);
    expect(tasks).not.toContain('hp.id');
  });

  it('without a scope, nothing of the rule is written', () => {
    const c = compileFilter(schema, 'Task', JSON.parse(TWO_HOPS), ['Task'], { cap: 100 });
    expect([c.sql, ...c.ctes!].join('\n')).not.toContain('records.record hp');
  });
});

describe('planQuery with a reader', () => {
  it('adds the rule for the queried rows to `where` (so to the count) and to its EXISTS fallback', () => {
    const { plan } = planQuery(schema, { entityType: 'Task', filtersJson: TWO_HOPS, includeTotal: true }, { reader });
    expect(plan.params.slice(0, 2)).toEqual(['Task', membershipProbe(USER)]);
    expect(plan.where).toContain(`r.retired_at is null and ${readableSql('r', '$2')}`);
    expect(plan.ctes!.join('\n')).toContain(readableSql('h1', '$2'));
    expect(plan.fallback!.where).toContain(readableSql('r', '$2'));
    expect(count(plan.fallback!.where, 'records.record hp')).toBe(3);
  });

  it('keeps cursors working: the keyset values are bound after the probe', () => {
    const first = planQuery(schema, { entityType: 'Task', order: [{ field: 'name' }] }, { reader });
    const cursor = Buffer.from(JSON.stringify({ k: ['comp', USER], o: first.fingerprint })).toString('base64url');
    const { plan } = planQuery(schema, { entityType: 'Task', order: [{ field: 'name' }], cursor }, { reader });
    expect(plan.params).toEqual(['Task', membershipProbe(USER), 'comp', USER]);
    expect(plan.where).toContain('$3::text');
    expect(plan.where).toContain(readableSql('r', '$2'));
  });

  it('a plan without a reader is byte for byte the plan it always was', () => {
    const input = { entityType: 'Task', filtersJson: TWO_HOPS, includeTotal: true };
    const plain = planQuery(schema, input, {});
    expect(planQuery(schema, input).plan).toEqual(plain.plan);
    expect(JSON.stringify(plain.plan)).not.toContain('records.record hp');
    // The filter's first value is $2, as before.
    expect(plain.plan.params[1]).toBe(JSON.stringify({ code: 'SQ030' }));
  });
});

describe('planSummary with a reader', () => {
  it('summarizes only readable rows and filters only through readable records', () => {
    const input = { entityType: 'Task', filtersJson: '[["entity.Shot.code", "is", "sh010"]]', summaryFieldsJson: '[{"field":"name","type":"count"}]' };
    const { statement } = planSummary(schema, input, reader);
    expect(statement.params.slice(0, 2)).toEqual(['Task', membershipProbe(USER)]);
    expect(statement.sql).toContain(`r.retired_at is null and ${readableSql('r', '$2')}`);
    expect(statement.sql).toContain(readableSql('h1', '$2'));
    expect(planSummary(schema, input).statement.sql).not.toContain('records.record hp');
  });
});

const ctx = (role: 'Admin' | 'Artist' | 'Service', authKind: 'token' | 'service' = 'token'): CallContext => ({
  requestId: 'r',
  principal: { userId: role === 'Service' ? '' : USER, role, authKind },
});

describe('who is planned with the reader rule', () => {
  class Store implements RecordQueryStore, SummaryStore {
    readonly readers = READERS;
    plans: QueryPlan[] = [];
    statements: SummaryStatement[] = [];
    names: (string | null | undefined)[] = [];
    async query(plan: QueryPlan) {
      this.plans.push(plan);
      return { rows: [], schemaVersion: 1 };
    }
    async summarize(statement: SummaryStatement) {
      this.statements.push(statement);
      return [{ g: 0, k0: USER, t0: 'User', a0: '1' }];
    }
    async namesOf(_ids: readonly string[], who?: string | null) {
      this.names.push(who);
      return new Map<string, string | null>();
    }
    async loadSchema() {
      return { version: 1, snapshot: SNAPSHOT };
    }
    async schemaVersion() {
      return 1;
    }
  }

  it('a user who is not an Admin is; an Admin and a service are not', async () => {
    const store = new Store();
    const queries = new RecordQueries(store);
    for (const c of [ctx('Artist'), ctx('Admin'), ctx('Service', 'service')]) await queries.query({ entityType: 'Task' }, c);
    expect(store.plans.map((p) => p.where.includes(readableSql('r', '$2')))).toEqual([true, false, false]);
    expect(store.plans[0]!.params).toEqual(['Task', membershipProbe(USER)]);

    const summaries = new RecordSummaries(store);
    const input = { entityType: 'Task', summaryFieldsJson: '[{"field":"name","type":"count"}]', groupingJson: '[{"field":"entity"}]' };
    for (const c of [ctx('Artist'), ctx('Admin')]) await summaries.summarize(input, c);
    expect(store.statements.map((s) => s.sql.includes(readableSql('r', '$2')))).toEqual([true, false]);
    // The names of linked groups are looked up as the caller reads them.
    expect(store.names).toEqual([USER, null]);
  });
});
