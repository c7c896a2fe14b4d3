/**
 * pgbench and the baseline write into a copy of the records tables (same columns,
 * defaults, constraints and indexes, in the same database), not into the live ones: the
 * records service's outbox relay would otherwise publish their rows while they are being
 * measured, and feed the event log with events nobody asked for.
 */
import pg from 'pg';

/** What the copy could not carry over (foreign keys and triggers are not copied by LIKE). */
export interface ShadowInfo {
  schema: string;
  notCopied: string[];
}

const TABLES = ['record', 'outbox'] as const;

/** (Re)creates `<target>.record` and `<target>.outbox` as copies of `<source>`'s. */
export async function createShadowTables(databaseUrl: string, source = 'records', target = 'bench_shadow'): Promise<ShadowInfo> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    await c.query(`drop schema if exists ${target} cascade`);
    await c.query(`create schema ${target}`);
    for (const t of TABLES) {
      await c.query(`create table ${target}.${t} (like ${source}.${t} including all)`);
    }
    // LIKE copies a serial column's default as is: nextval() of the source's sequence.
    const serials = await c.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
        where table_schema = $1 and column_default like 'nextval(%'`,
      [target],
    );
    for (const { table_name: t, column_name: col } of serials.rows) {
      const seq = `${target}.${t}_${col}_seq`;
      await c.query(`create sequence ${seq} owned by ${target}.${t}.${col}`);
      await c.query(`alter table ${target}.${t} alter column ${col} set default nextval('${seq}')`);
    }
    const missing = await c.query<{ what: string }>(
      `select format('%s on %s', con.conname, rel.relname) as what
         from pg_constraint con join pg_class rel on rel.oid = con.conrelid join pg_namespace n on n.oid = rel.relnamespace
        where n.nspname = $1 and rel.relname = any($2) and con.contype = 'f'
       union all
       select format('trigger %s on %s', tg.tgname, rel.relname)
         from pg_trigger tg join pg_class rel on rel.oid = tg.tgrelid join pg_namespace n on n.oid = rel.relnamespace
        where n.nspname = $1 and rel.relname = any($2) and not tg.tgisinternal`,
      [source, [...TABLES]],
    );
    return { schema: target, notCopied: missing.rows.map((r) => r.what) };
  } finally {
    await c.end();
  }
}
