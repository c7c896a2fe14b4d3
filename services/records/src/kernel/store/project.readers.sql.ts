/**
 * The reader rule in SQL (kernel/domain/project.readers.ts): one condition on a record row that
 * holds when the caller may read the project the row belongs to. Every statement that reads,
 * writes or hands out records for a caller who is not an Admin adds it; nothing else decides.
 *
 * `coalesce(r.project_id, r.id)` is the row's project: its `project_id`, or for a Project row
 * itself its own id (a studio-wide row's id is no project's, so it always passes). The set of
 * projects the caller may not read is one uncorrelated subquery, which PostgreSQL hashes once
 * per statement (a hashed SubPlan): a handful of restricted Project rows found through the
 * partial index `record_restricted_project_idx` (project.readers.migration.ts).
 */

/** The Project ids the user whose membership probe is bound at `probe` may not read. */
export function hiddenProjectsSql(probe: string): string {
  return `select hp.id from records.record hp
     where hp.entity_type = 'Project' and (hp.data->>'restricted') = 'true'
       and not coalesce(hp.data->'members' @> ${probe}::jsonb, false)`;
}

/** True for a row of `alias` the caller may read; `probe` is the bound membership probe (membershipProbe). */
export function readableSql(alias: string, probe: string): string {
  return `coalesce(${alias}.project_id, ${alias}.id) not in (${hiddenProjectsSql(probe)})`;
}

/** True when the project id given as SQL `projectIdSql` may be read (null: studio-wide, readable). */
export function projectReadableSql(projectIdSql: string, probe: string): string {
  return `(${projectIdSql} is null or ${projectIdSql} not in (${hiddenProjectsSql(probe)}))`;
}

/** Every restricted project with its member ids (the ListRestrictedProjects RPC), oldest first. */
export const RESTRICTED_PROJECTS_SQL = `select r.id,
    coalesce((select array_agg(m->>'id') from jsonb_array_elements(
      case when jsonb_typeof(r.data->'members') = 'array' then r.data->'members' else '[]'::jsonb end) m), '{}') as member_ids
  from records.record r
  where r.entity_type = 'Project' and (r.data->>'restricted') = 'true'
  order by r.id`;
