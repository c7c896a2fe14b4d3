/**
 * How records use each schema code (`GET /schema/usage`), counted by SQL over every record,
 * retired ones included (a retired record can be revived, so its codes stay in use).
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { CodeUsage } from '../domain/schema.removals.js';

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

export class UsageRepository {
  async count(db: Knex): Promise<RecordsUsage> {
    const usage: RecordsUsage = { entity_types: {}, fields: {}, statuses: {}, steps: {}, priorities: {}, options: {}, status_types: {} };
    // The set-returning functions make the planner's estimate large enough to JIT-compile the
    // query, which costs most of a second and gains nothing at this size: JIT off for this one.
    const res = await db.transaction(async (trx) => {
      await trx.raw('set local jit = off');
      return trx.raw<{ rows: { kind: keyof RecordsUsage; code: string; n: string }[] }>(USAGE_SQL);
    });
    for (const row of res.rows) usage[row.kind][row.code] = Number(row.n);
    return usage;
  }
}
