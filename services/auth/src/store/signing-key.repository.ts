/**
 * JWT signing keys. The newest unretired key signs; every unretired key verifies.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { dbError } from '@reelbase/lib-platform';
import { SigningKeyEntity, type SigningKeyRow } from './auth.entities.js';

export type NewSigningKey = Pick<SigningKeyRow, 'kid' | 'privateJwk' | 'publicJwk'>;

export class SigningKeyRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Unretired keys, newest first. */
  async listUsable(): Promise<SigningKeyRow[]> {
    try {
      return await this.orm.em.fork().find(SigningKeyEntity, { retiredAt: null }, { orderBy: { createdAt: 'desc', kid: 'desc' } });
    } catch (err) {
      return dbError(err);
    }
  }

  async insert(key: NewSigningKey): Promise<void> {
    try {
      const em = this.orm.em.fork();
      em.create(SigningKeyEntity, { ...key, createdAt: new Date(), retiredAt: null });
      await em.flush();
    } catch (err) {
      return dbError(err);
    }
  }

  /**
   * Inserts a key made by `generate` unless an unretired key exists. Replicas starting
   * together serialise on an advisory lock, so the first start creates exactly one key.
   */
  async ensureOne(generate: () => Promise<NewSigningKey>): Promise<void> {
    try {
      await this.orm.em.fork().transactional(async (em) => {
        await em.execute(`select pg_advisory_xact_lock(hashtext('auth:signing-key'))`);
        const found = await em.execute('select 1 from "auth"."signing_key" where "retired_at" is null limit 1');
        if (found.length > 0) return;
        em.create(SigningKeyEntity, { ...(await generate()), createdAt: new Date(), retiredAt: null });
      });
    } catch (err) {
      return dbError(err);
    }
  }
}
