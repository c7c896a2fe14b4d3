/**
 * How records use each schema code (`GET /schema/usage`), counted by SQL over every record,
 * retired ones included (a retired record can be revived, so its codes stay in use).
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { CodeUsage, Removal } from '../domain/core.ports.js';

/**
 * Option usage too: `<Type>.<field>.<option>` for the enum and multi_enum fields of the stored schema;
 * and status usage per type, `<Type>.<status>` (a status taken out of one type's scope).
 */
export type RecordsUsage = CodeUsage;

const USAGE_SQL = `
  select 'entity_types' as kind, entity_type as code, count(*) as n from records.record group by entity_type
  union all
  select 'fields', r.entity_type || '.' || k, count(*) from records.record r, jsonb_object_keys(r.data) k group by r.entity_type, k
  union all
  select 'statuses', status, count(*) from records.record where status is not null group by status
  union all
  select 'status_types', entity_type || '.' || status, count(*) from records.record where status is not null group by entity_type, status
  union all
  select 'steps', data->>'step', count(*) from records.record
   where entity_type = 'Task' and jsonb_typeof(data->'step') = 'string' group by data->>'step'
  union all
  select 'priorities', data->>'priority', count(*) from records.record
   where jsonb_typeof(data->'priority') = 'string' group by data->>'priority'
  union all
  select 'options', f.type || '.' || f.field || '.' || x.o, count(distinct r.id)
    from (select t->>'code' as type, fl->>'code' as field, fl->>'type' as ftype
            from records.schema_state s,
                 jsonb_array_elements(s.snapshot->'entity_types') t,
                 jsonb_array_elements(t->'fields') fl
           where fl->>'type' in ('enum', 'multi_enum')) f
    join records.record r on r.entity_type = f.type and jsonb_exists(r.data, f.field)
    cross join lateral (
      select r.data->>f.field where f.ftype = 'enum' and jsonb_typeof(r.data->f.field) = 'string'
      union all
      select e from jsonb_array_elements_text(case when f.ftype = 'multi_enum' and jsonb_typeof(r.data->f.field) = 'array'
                                                    then r.data->f.field else '[]'::jsonb end) e
    ) x(o)
   group by 2`;

/**
 * One count per removed code, each the same as {@link USAGE_SQL} counts that key, by the indexes on
 * `entity_type` and `status` where they apply: a delete counts only what it removes while writes wait.
 */
function removedCountSql(r: Removal): [string, unknown[]] {
  const [a, b, c] = r.parts;
  const head = 'select ?::text as kind, ?::text as code, count(*) as n from records.record';
  const keyed = [r.kind, r.key];
  switch (r.kind) {
    case 'entity_types':
      return [`${head} where entity_type = ?`, [...keyed, a]];
    case 'fields':
      return [`${head} where entity_type = ? and jsonb_exists(data, ?)`, [...keyed, a, b]];
    case 'options':
      return r.multi
        ? [`${head} where entity_type = ? and jsonb_typeof(data->?) = 'array' and jsonb_exists(data->?, ?)`, [...keyed, a, b, b, c]]
        : [`${head} where entity_type = ? and jsonb_typeof(data->?) = 'string' and data->>? = ?`, [...keyed, a, b, b, c]];
    case 'statuses':
      return [`${head} where status = ?`, [...keyed, a]];
    case 'status_types':
      return [`${head} where entity_type = ? and status = ?`, [...keyed, a, b]];
    case 'steps':
      return [`${head} where entity_type = 'Task' and jsonb_typeof(data->'step') = 'string' and data->>'step' = ?`, [...keyed, a]];
    case 'priorities':
      return [`${head} where jsonb_typeof(data->'priority') = 'string' and data->>'priority' = ?`, [...keyed, a]];
  }
}

export class UsageRepository {
  constructor(private readonly db: Knex) {}

  /** The usage of each removed code only (every other key absent), in one statement. */
  async countRemoved(removed: readonly Removal[]): Promise<RecordsUsage> {
    const usage: RecordsUsage = { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {}, options: {}, status_types: {} };
    if (removed.length === 0) return usage;
    const parts = removed.map(removedCountSql);
    const res = await this.db.raw<{ rows: { kind: keyof RecordsUsage; code: string; n: string }[] }>(
      parts.map(([sql]) => `(${sql})`).join(' union all '),
      parts.flatMap(([, bindings]) => bindings) as Knex.RawBinding[],
    );
    for (const row of res.rows) usage[row.kind][row.code] = Number(row.n);
    return usage;
  }

  async count(): Promise<RecordsUsage> {
    const usage: RecordsUsage = { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {}, options: {}, status_types: {} };
    // The set-returning functions make the planner's estimate large enough to JIT-compile the
    // query, which costs most of a second and gains nothing at this size: JIT off for this one.
    const res = await this.db.transaction(async (trx) => {
      await trx.raw('set local jit = off');
      return trx.raw<{ rows: { kind: keyof RecordsUsage; code: string; n: string }[] }>(USAGE_SQL);
    });
    for (const row of res.rows) usage[row.kind][row.code] = Number(row.n);
    return usage;
  }
}
