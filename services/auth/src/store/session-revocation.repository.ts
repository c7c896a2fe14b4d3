/**
 * Per user, the time before which their login tokens are refused ("revoke every session",
 * docs/api-notes.md, Authentication). One row per user; a later revocation moves it forward.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlRows } from '@reelbase/lib-platform';

export class SessionRevocationRepository {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  /** Sets the user's revocation time to now (database clock) and returns it. */
  revokeBefore(userId: string): Promise<Date> {
    return guarded(async () => {
      const rows = await sqlRows<{ revoked_before: Date }>(
        this.db,
        `insert into "auth"."session_revocation" ("user_id", "revoked_before") values (?, clock_timestamp())
           on conflict ("user_id") do update set "revoked_before" = greatest("session_revocation"."revoked_before", excluded."revoked_before")
         returning "revoked_before"`,
        [userId],
      );
      return new Date(rows[0]!.revoked_before);
    });
  }

  /** The user's revocation time, or null when their tokens were never revoked. */
  revokedBefore(userId: string): Promise<Date | null> {
    return guarded(async () => {
      const rows = await sqlRows<{ revoked_before: Date }>(this.db, 'select "revoked_before" from "auth"."session_revocation" where "user_id" = ?', [userId]);
      return rows.length ? new Date(rows[0]!.revoked_before) : null;
    });
  }
}
