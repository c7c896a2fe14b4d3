/**
 * The cascade of a renamed code over `records.record` (docs/architecture.md, "Records obey the schema"): one
 * transaction, applied once per rename journal id (`records.applied_rename` keeps the count). The
 * bulk of the rows is rewritten by one UPDATE per kind (counted in the database); Presets and Projects
 * that mention the code are rewritten row by row by domain/schema.rename.ts, first. Rows rewritten get a new `updated_at` (their
 * ETag changes) but no event: the schema service emits one event for the whole rename.
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { DataObject } from '../../kernel/domain/record.types.js';
import { rewriteSmallRecord, type CodeRename } from '../domain/schema.rename.js';
import { lockSchemaExclusive } from '../../kernel/store/schema.repository.js';

const NEXT_UPDATED_AT = `greatest(clock_timestamp(), updated_at + interval '1 microsecond')`;

/** `v` (a JSON value of data) with link objects of type :from renamed to :to, also inside arrays. */
const RENAME_LINK = (v: string) => `case
  when jsonb_typeof(${v}) = 'object' and ${v}->>'type' = :from and jsonb_exists(${v}, 'id') then ${v} || jsonb_build_object('type', :to::text)
  else ${v} end`;

const RENAME_LINKS_IN_DATA = `(select coalesce(jsonb_object_agg(kv.k, case
    when jsonb_typeof(kv.v) = 'array' then
      (select coalesce(jsonb_agg(${RENAME_LINK('a.e')} order by a.i), '[]'::jsonb) from jsonb_array_elements(kv.v) with ordinality a(e, i))
    else ${RENAME_LINK('kv.v')} end), '{}'::jsonb)
  from jsonb_each(data) kv(k, v))`;

/** One bulk UPDATE per kind; each returns the ids it rewrote. */
const BULK: Record<CodeRename['kind'], string> = {
  entity_type: `update records.record
      set entity_type = case when entity_type = :from then :to::text else entity_type end,
          data = ${RENAME_LINKS_IN_DATA},
          updated_at = ${NEXT_UPDATED_AT}
    where entity_type = :from
       or jsonb_path_exists(data, '$.* \\? (@.type == $t && exists(@.id))', jsonb_build_object('t', :from::text))
   returning id`,
  status: `update records.record set status = :to::text, updated_at = ${NEXT_UPDATED_AT} where status = :from returning id`,
  step: `update records.record set data = jsonb_set(data, '{step}', to_jsonb(:to::text)), updated_at = ${NEXT_UPDATED_AT}
    where entity_type = 'Task' and data->'step' = to_jsonb(:from::text) returning id`,
  priority: `update records.record set data = jsonb_set(data, '{priority}', to_jsonb(:to::text)), updated_at = ${NEXT_UPDATED_AT}
    where data->'priority' = to_jsonb(:from::text) returning id`,
  option: `update records.record
      set data = jsonb_set(data, array[:field::text], case
            when jsonb_typeof(data->:field::text) = 'array' then
              (select jsonb_agg(case when a.e = to_jsonb(:from::text) then to_jsonb(:to::text) else a.e end order by a.i)
                 from jsonb_array_elements(data->:field::text) with ordinality a(e, i))
            else to_jsonb(:to::text) end),
          updated_at = ${NEXT_UPDATED_AT}
    where entity_type = :type
      and (data->:field::text = to_jsonb(:from::text) or data->:field::text @> jsonb_build_array(:from::text))
   returning id`,
};

export class RenameRepository {
  constructor(private readonly trx: Knex.Transaction) {}

  /** Applies `r` in `trx` unless its journal id was applied before; the number of records rewritten. */
  async apply(r: CodeRename): Promise<number> {
    // Every write validated against an older definition commits first, so the statements below see it.
    await lockSchemaExclusive(this.trx);
    // Two calls with one journal id: the second waits here for the first to commit, then sees it.
    const claimed = await this.trx.raw<{ rows: unknown[] }>(
      `insert into records.applied_rename (journal_id, kind, from_code, to_code, rewritten) values (?, ?, ?, ?, 0)
       on conflict (journal_id) do nothing returning 1`,
      [r.journalId, r.kind, r.from, r.to],
    );
    if (claimed.rows.length === 0) {
      const done = await this.trx.raw<{ rows: { rewritten: string }[] }>('select rewritten from records.applied_rename where journal_id = ?', [r.journalId]);
      return Number(done.rows[0]?.rewritten ?? 0);
    }
    // Presets and Projects whose data mentions the code as a JSON string: few, rewritten one by one.
    const needle = JSON.stringify(r.from);
    const small = await this.trx.raw<{ rows: { id: string; entity_type: string; data: DataObject }[] }>(
      `select id, entity_type, data from records.record
        where entity_type in ('Preset', 'Project') and strpos(data::text, ?) > 0
        for update`,
      [needle],
    );
    const smallIds: string[] = [];
    for (const row of small.rows) {
      const next = rewriteSmallRecord(row.entity_type, row.data, r);
      if (!next) continue;
      await this.trx.raw(`update records.record set data = ?::jsonb, updated_at = ${NEXT_UPDATED_AT} where id = ?`, [JSON.stringify(next), row.id]);
      smallIds.push(row.id);
    }
    // The bulk: counted in the database (no ids shipped back), without the rows counted above.
    const params = { from: r.from, to: r.to, field: r.field, type: r.entityType, small: smallIds };
    const bulk = await this.trx.raw<{ rows: { n: string }[] }>(
      `with u as (${BULK[r.kind]}) select count(*) filter (where not (u.id = any(:small::uuid[]))) as n from u`,
      params,
    );
    const rewritten = { size: smallIds.length + Number(bulk.rows[0]!.n) };
    await this.trx.raw('update records.applied_rename set rewritten = ? where journal_id = ?', [rewritten.size, r.journalId]);
    return rewritten.size;
  }
}
