/**
 * Failed login attempts, kept in PostgreSQL so the per-email limit holds across replicas.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { dbError } from '@reelbase/lib-platform';

export class LoginFailureRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Times (ms since epoch) of the newest `limit` failures for `email` after `since`. */
  async recent(email: string, since: Date, limit: number): Promise<number[]> {
    try {
      const rows = await this.orm.em
        .getConnection()
        .execute<{ failed_at: Date }[]>(
          `select "failed_at" from "auth"."login_failure"
            where "email" = ? and "failed_at" > ? order by "failed_at" desc limit ?`,
          [email, since, limit],
        );
      return rows.map((r) => new Date(r.failed_at).getTime());
    } catch (err) {
      return dbError(err);
    }
  }

  async add(email: string, at: Date): Promise<void> {
    try {
      await this.orm.em.getConnection().execute('insert into "auth"."login_failure" ("email", "failed_at") values (?, ?)', [email, at]);
    } catch (err) {
      return dbError(err);
    }
  }

  async remove(email: string, at: Date): Promise<void> {
    try {
      await this.orm.em
        .getConnection()
        .execute(
          'delete from "auth"."login_failure" where ctid in (select ctid from "auth"."login_failure" where "email" = ? and "failed_at" = ? limit 1)',
          [email, at],
        );
    } catch (err) {
      return dbError(err);
    }
  }

  async clear(email: string): Promise<void> {
    try {
      await this.orm.em.getConnection().execute('delete from "auth"."login_failure" where "email" = ?', [email]);
    } catch (err) {
      return dbError(err);
    }
  }

  /** Drops rows that no longer count towards any window. */
  async sweep(before: Date): Promise<void> {
    try {
      await this.orm.em.getConnection().execute('delete from "auth"."login_failure" where "failed_at" < ?', [before]);
    } catch (err) {
      return dbError(err);
    }
  }
}
