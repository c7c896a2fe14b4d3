/**
 * Credentials: one row per user who can log in. Registration runs in one transaction under
 * an advisory lock so "is this the first user?" has exactly one answer.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { AppError, dbError } from '@reelbase/lib-platform';
import type { RegistrationTx } from '../domain/registration.service.js';
import { CredentialEntity, type CredentialRow } from './auth.entities.js';

const UNIQUE_VIOLATION = '23505';

export class CredentialRepository {
  constructor(private readonly orm: MikroORM) {}

  async findByEmail(email: string): Promise<CredentialRow | null> {
    try {
      return await this.orm.em.fork().findOne(CredentialEntity, { email });
    } catch (err) {
      return dbError(err);
    }
  }

  async anyExists(): Promise<boolean> {
    try {
      return await anyCredential(this.orm.em.fork());
    } catch (err) {
      return dbError(err);
    }
  }

  /**
   * Runs `fn` in a transaction holding the registration lock; the transaction commits when
   * `fn` resolves and rolls back when it throws.
   */
  async register<T>(fn: (tx: RegistrationTx) => Promise<T>): Promise<T> {
    try {
      return await this.orm.em.fork().transactional(async (em) => {
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
      });
    } catch (err) {
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) {
        throw AppError.conflict('duplicate_code', 'a user with this email already exists (the email is the login code)');
      }
      return dbError(err);
    }
  }
}

async function anyCredential(em: EntityManager): Promise<boolean> {
  return (await em.execute('select 1 from "auth"."credential" limit 1')).length > 0;
}
