import { describe, expect, it } from 'vitest';
import type { QueryPlan } from '../domain/core.ports.js';
import { BY_PROJECT_MAX, QueryRepository } from './query.repository.js';

/** A query pool that answers the readable-projects count with `counts` and records every statement. */
function pool(counts: { readable: number; total: number }) {
  const texts: string[] = [];
  return {
    texts,
    db: {
      async query<R>(text: string): Promise<{ rows: R[] }> {
        texts.push(text);
        if (text.includes('as readable')) return { rows: [counts as R] };
        return { rows: [{ j: null, v: '1' } as R] };
      },
    },
  };
}

const plan = (readerProbe?: string): QueryPlan => ({
  where: 'r.entity_type = $1::text and (true) and r.retired_at is null and <rule>',
  data: 'r.data',
  dataParams: [],
  params: ['Task', ...(readerProbe ? [readerProbe] : [])],
  keys: ['r.id'],
  orderBy: 'r.id asc',
  limit: 51,
  includeTotal: false,
  ...(readerProbe ? { readerProbe, unscopedWhere: 'r.entity_type = $1::text and (true) and r.retired_at is null' } : {}),
});

const walkedByProject = (texts: string[]) => texts.some((t) => t.includes('with rp as materialized'));

describe('QueryRepository: readable projects first', () => {
  it('walks project by project only for a caller kept out of some project who reads few', async () => {
    const few = pool({ readable: 5, total: 50 });
    await new QueryRepository(few.db).query(plan('[{"id":"u"}]'));
    expect(walkedByProject(few.texts)).toBe(true);

    const all = pool({ readable: 50, total: 50 });
    await new QueryRepository(all.db).query(plan('[{"id":"u"}]'));
    expect(walkedByProject(all.texts)).toBe(false);

    const many = pool({ readable: BY_PROJECT_MAX + 1, total: BY_PROJECT_MAX + 10 });
    await new QueryRepository(many.db).query(plan('[{"id":"u"}]'));
    expect(walkedByProject(many.texts)).toBe(false);
  });

  it('asks no count for a plan without the rule (an Admin), and holds a caller’s count a few seconds', async () => {
    const admin = pool({ readable: 5, total: 50 });
    await new QueryRepository(admin.db).query(plan());
    expect(admin.texts.some((t) => t.includes('as readable'))).toBe(false);

    let now = 1_000;
    const held = pool({ readable: 5, total: 50 });
    const repo = new QueryRepository(held.db, () => now);
    await repo.query(plan('[{"id":"u"}]'));
    await repo.query(plan('[{"id":"u"}]'));
    expect(held.texts.filter((t) => t.includes('as readable'))).toHaveLength(1);
    now += 6_000;
    await repo.query(plan('[{"id":"u"}]'));
    expect(held.texts.filter((t) => t.includes('as readable'))).toHaveLength(2);
  });
});
