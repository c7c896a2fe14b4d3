/**
 * SQL for `records.schema_state`: the one row holding the schema snapshot records validates
 * against (docs/architecture.md, "Records obey the schema").
 */
import type { Knex } from '@mikro-orm/postgresql';
import type { StoredSchema } from '../domain/record.ports.js';
import type { SchemaSnapshot } from '../domain/schema.snapshot.js';
import type { Db } from './knex.db.js';

/** The stored version as one scalar expression (0 before any snapshot); cheap enough for every write. */
export const SCHEMA_VERSION_SQL = `coalesce((select version from records.schema_state where id = 1), 0)`;

/**
 * A condition that takes the schema lock in shared mode for the rest of the transaction (true once
 * granted). Every write that validates against the schema holds it; ApplySchema and ApplyRename take
 * it exclusively, so a rename's cascade starts only after every write validated against the old
 * definition has committed, and sees it (docs/architecture.md, "Records obey the schema"). As an
 * uncorrelated subquery it is evaluated once, before the statement locks or writes any row.
 */
export const SCHEMA_SHARED_LOCK_SQL = `(select true from (select pg_advisory_xact_lock_shared(hashtext('records:schema'))) l)`;

/** Takes the schema lock exclusively until the transaction ends. */
export async function lockSchemaExclusive(db: Db): Promise<void> {
  await db.raw(`select pg_advisory_xact_lock(hashtext('records:schema'))`);
}

export class SchemaRepository {
  constructor(private readonly db: Db) {}

  async load(): Promise<StoredSchema | undefined> {
    const res = await this.db.raw<{ rows: { version: string; snapshot: SchemaSnapshot }[] }>('select version, snapshot from records.schema_state where id = 1');
    const row = res.rows[0];
    return row ? { version: Number(row.version), snapshot: row.snapshot } : undefined;
  }

  async version(): Promise<number> {
    const res = await this.db.raw<{ rows: { v: string }[] }>(`select ${SCHEMA_VERSION_SQL} as v`);
    return Number(res.rows[0]!.v);
  }

  /** In a transaction: takes the schema lock in shared mode, and reads the version. */
  async lockedVersion(): Promise<number> {
    const res = await this.db.raw<{ rows: { v: string }[] }>(`select ${SCHEMA_VERSION_SQL} as v where ${SCHEMA_SHARED_LOCK_SQL}`);
    return Number(res.rows[0]!.v);
  }

  /**
   * Upserts the row only when `version` is newer than the stored one; true when it was written. In a
   * transaction of its own: writes still validating against the stored version finish first.
   * `beforeWrite` runs once the lock is held, with the stored snapshot, and may refuse by throwing
   * (nothing is written then): no write validates or commits between it and the upsert.
   */
  async apply(version: number, snapshotJson: string, beforeWrite?: (held: StoredSchema | undefined) => Promise<void>): Promise<boolean> {
    await lockSchemaExclusive(this.db);
    if (beforeWrite) {
      const held = await this.load();
      if (held && held.version >= version) return false;
      await beforeWrite(held);
    }
    const res = await this.db.raw<{ rows: unknown[] }>(
      `insert into records.schema_state (id, version, snapshot) values (1, ?, ?::jsonb)
       on conflict (id) do update set version = excluded.version, snapshot = excluded.snapshot, applied_at = now()
        where records.schema_state.version < excluded.version
       returning 1`,
      [version, snapshotJson] as Knex.RawBinding[],
    );
    return res.rows.length > 0;
  }
}
