/**
 * Login attempts per email, kept in PostgreSQL so the per-email limit holds across replicas:
 * a row is a pending reservation (an attempt whose password is being checked) or a failure.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlRows } from '@reelbase/lib-platform';
import type { LoginFailureStore, Reservation } from '../domain/ports.js';

export class LoginFailureRepository implements LoginFailureStore {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  /**
   * Reads the window and inserts the reservation under a transaction-scoped advisory lock
   * per email, so two replicas can never both take the last slot.
   */
  reserve(email: string, at: Date, since: Date, max: number): Promise<Reservation> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:login:' || ?))`, [email]);
        const rows = await sqlRows<{ failed_at: Date; pending: boolean }>(
          trx,
          `select "failed_at", "pending" from "auth"."login_failure"
            where "email" = ? and "failed_at" > ? order by "failed_at" desc limit ?`,
          [email, since, max],
        );
        if (rows.length < max) {
          const [row] = await sqlRows<{ id: string }>(
            trx,
            'insert into "auth"."login_failure" ("email", "failed_at", "pending") values (?, ?, true) returning "id"',
            [email, at],
          );
          return { granted: true, id: String(row!.id) };
        }
        return {
          granted: false,
          failures: rows.filter((r) => !r.pending).map((r) => new Date(r.failed_at).getTime()),
          pending: rows.filter((r) => r.pending).length,
        };
      }),
    );
  }

  async fail(id: string): Promise<void> {
    await this.run('update "auth"."login_failure" set "pending" = false where "id" = ?', [id]);
  }

  async release(id: string): Promise<void> {
    await this.run('delete from "auth"."login_failure" where "id" = ?', [id]);
  }

  async clear(email: string): Promise<void> {
    await this.run('delete from "auth"."login_failure" where "email" = ? and not "pending"', [email]);
  }

  /** Drops rows that no longer count towards any window. */
  async sweep(before: Date): Promise<void> {
    await this.run('delete from "auth"."login_failure" where "failed_at" < ?', [before]);
  }

  private async run(sql: string, params: unknown[]): Promise<void> {
    await guarded(() => sqlRows(this.db, sql, params));
  }
}
