/**
 * Credentials: one row per user with a login address (the password may be unset). Registration
 * runs in one transaction under an advisory lock so "is this the first user?" has exactly one
 * answer. An address is taken when a credential or a claim (`email_claim`, a User record being
 * written) holds it; every write that takes one first locks the address (`auth:email:<address>`),
 * so two writers never both find it free.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { AppError, guarded, sqlRows } from '@reelbase/lib-platform';
import { CredentialEntity, type CredentialRow } from './auth.entities.js';
import type { AccountCredential, AccountStore, RegistrationTx } from '../domain/ports.js';

const UNIQUE_VIOLATION = '23505';

export class CredentialRepository implements AccountStore {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  findByEmail(email: string): Promise<CredentialRow | null> {
    return guarded(() => this.orm.em.fork().findOne(CredentialEntity, { email }));
  }

  anyExists(): Promise<boolean> {
    return guarded(() => anyCredential(this.db));
  }

  /**
   * Runs `fn` in a transaction holding the registration lock; the transaction commits when
   * `fn` resolves and rolls back when it throws.
   */
  register<T>(fn: (tx: RegistrationTx) => Promise<T>): Promise<T> {
    return guarded(
      () =>
        this.db.transaction(async (trx) => {
          await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:register'))`);
          const tx: RegistrationTx = {
            anyExists: () => anyCredential(trx),
            emailTaken: async (email) => {
              await lockEmail(trx, email);
              return (await holdersOf(trx, email)).length > 0;
            },
            insert: async (row) => {
              await trx.raw('insert into "auth"."credential" ("user_id", "email", "password_hash", "created_at") values (?, ?, ?, now())', [
                row.userId,
                row.email,
                row.passwordHash,
              ]);
            },
          };
          return fn(tx);
        }),
      { [UNIQUE_VIOLATION]: taken },
    );
  }

  async findByUser(userId: string): Promise<AccountCredential | null> {
    const row = await guarded(() => this.orm.em.fork().findOne(CredentialEntity, { userId }));
    return row ? { userId: row.userId, email: row.email, passwordHash: row.passwordHash } : null;
  }

  claim(userId: string, email: string): Promise<void> {
    return guarded(
      () =>
        this.db.transaction(async (trx) => {
          await lockEmail(trx, email);
          if ((await holdersOf(trx, email)).some((holder) => holder !== userId)) throw taken();
          const own = await sqlRows<{ email: string }>(trx, 'select "email" from "auth"."email_claim" where "user_id" = ?', [userId]);
          if (own.length && own[0]!.email === email) return;
          if (own.length) throw AppError.conflict('email_change_pending', "another change of this user's email is still being applied; try again shortly");
          await trx.raw('insert into "auth"."email_claim" ("user_id", "email", "created_at") values (?, ?, now())', [userId, email]);
        }),
      { [UNIQUE_VIOLATION]: taken },
    );
  }

  async settle(userId: string, email: string): Promise<void> {
    // One statement: the claim goes and the credential takes the address at the same commit.
    await guarded(
      () =>
        this.db.raw(
          `with c as (delete from "auth"."email_claim" where "user_id" = ? and "email" = ? returning "user_id", "email")
           insert into "auth"."credential" ("user_id", "email", "password_hash", "created_at")
           select "user_id", "email", null, now() from c
           on conflict ("user_id") do update set "email" = excluded."email"`,
          [userId, email],
        ),
      { [UNIQUE_VIOLATION]: taken },
    );
  }

  async release(userId: string, email: string): Promise<void> {
    await guarded(() => this.db.raw('delete from "auth"."email_claim" where "user_id" = ? and "email" = ?', [userId, email]));
  }

  claimsBefore(before: Date): Promise<{ userId: string; email: string }[]> {
    return guarded(async () => {
      const rows = await sqlRows<{ user_id: string; email: string }>(
        this.db,
        'select "user_id", "email" from "auth"."email_claim" where "created_at" < ? order by "created_at" limit 100',
        [before],
      );
      return rows.map((r) => ({ userId: r.user_id, email: r.email }));
    });
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<boolean> {
    const rows = await guarded(() =>
      sqlRows<{ user_id: string }>(this.db, 'update "auth"."credential" set "password_hash" = ? where "user_id" = ? returning "user_id"', [
        passwordHash,
        userId,
      ]),
    );
    return rows.length > 0;
  }

  insertCredential(userId: string, email: string, passwordHash: string): Promise<void> {
    return guarded(
      () =>
        this.db.transaction(async (trx) => {
          await lockEmail(trx, email);
          if ((await holdersOf(trx, email)).some((holder) => holder !== userId)) throw taken();
          await trx.raw(
            `insert into "auth"."credential" ("user_id", "email", "password_hash", "created_at") values (?, ?, ?, now())
             on conflict ("user_id") do update set "password_hash" = excluded."password_hash"`,
            [userId, email, passwordHash],
          );
        }),
      { [UNIQUE_VIOLATION]: taken },
    );
  }
}

const taken = () => AppError.conflict('duplicate_code', 'a user with this email already exists (the email is the login code)');

/** Serialises every write that takes `email` (held to the end of the transaction). */
async function lockEmail(trx: Knex.Transaction, email: string): Promise<void> {
  await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:email:' || ?))`, [email]);
}

/** The users whose credential or claim holds `email`. */
async function holdersOf(db: Knex, email: string): Promise<string[]> {
  const rows = await sqlRows<{ user_id: string }>(
    db,
    'select "user_id" from "auth"."credential" where "email" = ? union select "user_id" from "auth"."email_claim" where "email" = ?',
    [email, email],
  );
  return rows.map((r) => r.user_id);
}

async function anyCredential(db: Knex): Promise<boolean> {
  return (await sqlRows(db, 'select 1 from "auth"."credential" limit 1')).length > 0;
}
