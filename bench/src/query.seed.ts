/**
 * Bulk seed of a production-shaped record table for bench:query, written straight into
 * `records.record` with INSERT ... SELECT generate_series (the API would take hours for a
 * million records). Per project, for S Shots: S/100 Sequences, S Shots, 4 Tasks per Shot
 * (layout, anim, light, comp), 3 Versions per comp Task and 2 Notes per Shot (on its first two
 * Versions) — about 10 records per Shot. Ids are time-ordered (UUID v7 layout) like the
 * service's own, spread over the past year in creation order.
 */
import type pg from 'pg';

export interface SeedOptions {
  /** Records to seed in all (approximately: whole Shots per project). */
  records: number;
  projects: number;
  /** Users the Tasks are assigned to and the Notes are written by. */
  users: number;
  /** The user who created every record. */
  createdBy: string;
}

export interface SeedCounts {
  shotsPerProject: number;
  sequencesPerProject: number;
  byType: Record<string, number>;
  total: number;
}

/** Records per Shot: the Shot, 4 Tasks, 3 Versions, 2 Notes. */
const RECORDS_PER_SHOT = 10;

/** Seeds; returns what was written. `log` hears each step. */
export async function seedRecords(sql: pg.Client, o: SeedOptions, log: (msg: string) => void): Promise<SeedCounts> {
  const shotsPerProject = Math.max(1, Math.round(o.records / o.projects / RECORDS_PER_SHOT));
  const sequencesPerProject = Math.max(1, Math.round(shotsPerProject / 100));
  const shotsPerSequence = Math.ceil(shotsPerProject / sequencesPerProject);
  // A UUID v7 of `ts`: 48 bits of milliseconds, version 7, random rest with the RFC variant.
  await sql.query(`create or replace function pg_temp.bench_id(ts timestamptz) returns uuid language sql volatile as $$
    select (lpad(to_hex((extract(epoch from ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3)
            || substr('89ab', 1 + floor(random() * 4)::int, 1) || substr(md5(random()::text), 1, 15))::uuid $$`);
  // Time runs from a year ago to now in creation order: row n of N at start + n/N of the year.
  const at = (n: string, of: string) => `(now() - interval '365 days' + (${n})::float8 / (${of})::float8 * interval '364 days')`;
  const insert = `insert into records.record (id, entity_type, project_id, status, active, created_by, created_at, updated_at, data)`;
  const step = async (what: string, text: string, params: unknown[] = []) => {
    const t0 = performance.now();
    const r = await sql.query(text, params);
    log(`seed: ${what}: ${r.rowCount} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  const by = o.createdBy;
  await step(
    'Users',
    `${insert} select pg_temp.bench_id(ts), 'User', null, null, true, $1::uuid, ts, ts,
        jsonb_build_object('name', 'Artist ' || u, 'email', 'artist' || u || '@bench.example', 'role', 'Artist', 'login_enabled', true)
       from generate_series(1, $2::int) u, lateral (select ${at('u', '1000000')} as ts) t`,
    [by, o.users],
  );
  // Numbered once, so each Task and Note picks its user by number.
  await sql.query(`create temporary table users (i int primary key, id uuid not null)`);
  await sql.query(`insert into users select row_number() over (order by id), id from records.record
    where entity_type = 'User' and data->>'email' like 'artist%@bench.example'`);
  await step(
    'Projects',
    `${insert} select pg_temp.bench_id(ts), 'Project', null, 'active', true, $1::uuid, ts, ts,
        jsonb_build_object('name', 'Bench show ' || p, 'code', 'show' || lpad(p::text, 2, '0'))
       from generate_series(1, $2::int) p, lateral (select ${at('p', '100000')} as ts) t`,
    [by, o.projects],
  );
  await step(
    'Sequences',
    `${insert} select pg_temp.bench_id(ts), 'Sequence', p.id, 'ip', true, $1::uuid, ts, ts,
        jsonb_build_object('code', 'SQ' || lpad((q * 10)::text, 3, '0'), 'description', 'Sequence ' || q || ' of ' || (p.data->>'name'))
       from records.record p, generate_series(1, $2::int) q, lateral (select ${at('q', '10000')} as ts) t
      where p.entity_type = 'Project' and p.data->>'code' like 'show%'`,
    [by, sequencesPerProject],
  );
  // Shots: wtg 30%, ip 35%, rev 10%, fin 20%, omt 5%.
  await step(
    'Shots',
    `${insert} select pg_temp.bench_id(ts), 'Shot', s.project_id,
        case when h < 30 then 'wtg' when h < 65 then 'ip' when h < 75 then 'rev' when h < 95 then 'fin' else 'omt' end,
        true, $1::uuid, ts, ts,
        jsonb_build_object(
          'code', 'SH' || lpad((((q - 1) * $2::int + k) * 10)::text, 5, '0'),
          'description', 'Shot ' || k || ' of ' || (s.data->>'code') || ': ' || (array['plate cleanup', 'CG creature', 'set extension', 'crowd', 'FX water', 'matte painting'])[1 + (k % 6)],
          'sequence', jsonb_build_object('type', 'Sequence', 'id', s.id),
          'cut_in', 1001, 'cut_out', 1001 + 24 + (k * 37) % 200)
       from (select r.*, row_number() over (partition by r.project_id order by r.id) as q from records.record r where r.entity_type = 'Sequence') s,
            generate_series(1, $2::int) k,
            lateral (select (k * 7919 + q * 31) % 100 as h, ${at('q * 1000 + k', '1000000')} as ts) t
      where (q - 1) * $2::int + k <= $3::int`,
    [by, shotsPerSequence, shotsPerProject],
  );
  // Tasks: 4 per Shot; exactly one in four fin (include_total over 'fin' counts a quarter of them).
  await step(
    'Tasks',
    `${insert} select pg_temp.bench_id(ts), 'Task', s.project_id,
        case when (n + k) % 4 = 0 then 'fin' else (array['wtg', 'ip', 'rev'])[1 + (n + k) % 3] end,
        true, $1::uuid, ts, ts,
        jsonb_build_object(
          'name', (array['layout', 'anim', 'light', 'comp'])[k], 'step', (array['layout', 'anim', 'light', 'comp'])[k],
          'entity', jsonb_build_object('type', 'Shot', 'id', s.id),
          'assignees', jsonb_build_array(jsonb_build_object('type', 'User', 'id', (select u.id from users u where u.i = 1 + (n * 4 + k) % $2::int))),
          'priority', (array['low', 'medium', 'high'])[1 + (n + k) % 3],
          'start_date', (current_date - 200 + (n % 180)::int)::text, 'due_date', (current_date - 100 + (n % 180)::int + k * 7)::text,
          'estimate_minutes', 60 * (1 + (n + k) % 16))
       from (select r.*, row_number() over (order by r.id) as n from records.record r where r.entity_type = 'Shot') s,
            generate_series(1, 4) k,
            lateral (select s.created_at + k * interval '1 second' as ts) t`,
    [by, o.users],
  );
  await step(
    'Versions',
    `${insert} select pg_temp.bench_id(ts), 'Version', t.project_id,
        case when v < 3 then 'rev' else (array['rev', 'apr', 'na'])[1 + (n % 3)] end,
        true, $1::uuid, ts, ts,
        jsonb_build_object(
          'code', (sh.data->>'code') || '_comp_v' || lpad(v::text, 3, '0'),
          'description', 'comp v' || v || ' of ' || (sh.data->>'code'),
          'entity', t.data->'entity', 'task', jsonb_build_object('type', 'Task', 'id', t.id))
       from (select r.*, row_number() over (order by r.id) as n from records.record r where r.entity_type = 'Task' and r.data->>'name' = 'comp') t
            join records.record sh on sh.id = (t.data->'entity'->>'id')::uuid,
            generate_series(1, 3) v,
            lateral (select t.created_at + v * interval '1 day' as ts) x`,
    [by],
  );
  await step(
    'Notes',
    `${insert} select pg_temp.bench_id(ts), 'Note', v.project_id, 'opn', true, $1::uuid, ts, ts,
        jsonb_build_object(
          'subject', 'Note on ' || (v.data->>'code'),
          'content', (array['Edge is soft on the left, tighten the matte.', 'Grain does not match the plate; please regrain.',
                            'Timing feels late by two frames.', 'Looks great, approved for the client.'])[1 + (n % 4)],
          'links', jsonb_build_array(jsonb_build_object('type', 'Version', 'id', v.id), v.data->'entity'),
          'author', jsonb_build_object('type', 'User', 'id', (select u.id from users u where u.i = 1 + n % $2::int)))
       from (select r.*, row_number() over (order by r.id) as n from records.record r
              where r.entity_type = 'Version' and right(r.data->>'code', 4) in ('v001', 'v002')) v,
            lateral (select v.created_at + interval '1 hour' as ts) x`,
    [by, o.users],
  );
  const counts = await sql.query<{ entity_type: string; n: number }>('select entity_type, count(*)::int as n from records.record group by 1 order by 1');
  const byType = Object.fromEntries(counts.rows.map((r) => [r.entity_type, r.n]));
  return { shotsPerProject, sequencesPerProject, byType, total: counts.rows.reduce((s, r) => s + r.n, 0) };
}
