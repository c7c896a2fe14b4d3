/**
 * Credentials: one row per user who can log in. Registration runs in one transaction under
 * an advisory lock so "is this the first user?" has exactly one answer.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { AppError, guarded } from '@reelbase/lib-platform';
import type { RegistrationTx } from '../domain/registration.service.js';
import { CredentialEntity, type CredentialRow } from './auth.entities.js';

const UNIQUE_VIOLATION = '23505';

export class CredentialRepository {
  constructor(private readonly orm: MikroORM) {}

  findByEmail(email: string): Promise<CredentialRow | null> {
    return guarded(() => this.orm.em.fork().findOne(CredentialEntity, { email }));
  }

  anyExists(): Promise<boolean> {
    return guarded(() => anyCredential(this.orm.em.fork()));
  }

  /**
   * Runs `fn` in a transaction holding the registration lock; the transaction commits when
   * `fn` resolves and rolls back when it throws.
   */
  register<T>(fn: (tx: RegistrationTx) => Promise<T>): Promise<T> {
    return guarded(
      () =>
        this.orm.em.fork().transactional(async (em) => {
          await em.execute(`select pg_advisory_xact_lock(hashtext('auth:register'))`);
          const tx: RegistrationTx = {
            anyExists: () => anyCredential(em),
            emailTaken: async (email) =>
              (await em.execute('select 1 from "auth"."credential" where "email" = ? limit 1', [email])).length > 0,
            insert: async (row) => {
              await em.execute(
                'insert into "auth"."credential" ("user_id", "email", "password_hash", "created_at") values (?, ?, ?, now())',
                [row.userId, row.email, row.passwordHash],
              );
            },
          };
          return fn(tx);
        }),
      { [UNIQUE_VIOLATION]: () => AppError.conflict('duplicate_code', 'a user with this email already exists (the email is the login code)') },
    );
  }
}

async function anyCredential(em: EntityManager): Promise<boolean> {
  return (await em.execute('select 1 from "auth"."credential" limit 1')).length > 0;
}
