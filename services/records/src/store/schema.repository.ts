/**
 * SQL for `records.schema_state`: the one row holding the schema snapshot records validates
 * against (docs/architecture.md, "Schema").
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StoredSchema } from '../domain/record.store.js';
import type { SchemaSnapshot } from '../domain/schema.snapshot.js';
import type { Db } from './record.repository.js';

/** The stored version as one scalar expression (0 before any snapshot); cheap enough for every write. */
export const SCHEMA_VERSION_SQL = `coalesce((select version from records.schema_state where id = 1), 0)`;

export class SchemaRepository {
  async load(db: Db): Promise<StoredSchema | undefined> {
    const res = await db.raw<{ rows: { version: string; snapshot: SchemaSnapshot }[] }>('select version, snapshot from records.schema_state where id = 1');
    const row = res.rows[0];
    return row ? { version: Number(row.version), snapshot: row.snapshot } : undefined;
  }

  async version(db: Db): Promise<number> {
    const res = await db.raw<{ rows: { v: string }[] }>(`select ${SCHEMA_VERSION_SQL} as v`);
    return Number(res.rows[0]!.v);
  }

  /** Upserts the row only when `version` is newer than the stored one; true when it was written. */
  async apply(db: Db, version: number, snapshotJson: string): Promise<boolean> {
    const res = await db.raw<{ rows: unknown[] }>(
      `insert into records.schema_state (id, version, snapshot) values (1, ?, ?::jsonb)
       on conflict (id) do update set version = excluded.version, snapshot = excluded.snapshot, applied_at = now()
        where records.schema_state.version < excluded.version
       returning 1`,
      [version, snapshotJson] as Knex.RawBinding[],
    );
    return res.rows.length > 0;
  }
}
