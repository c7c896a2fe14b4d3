/**
 * JWT signing keys. The newest unretired key signs; every unretired key verifies.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import { SigningKeyEntity, type SigningKeyRow } from './auth.entities.js';

export type NewSigningKey = Pick<SigningKeyRow, 'kid' | 'privateJwk' | 'publicJwk'>;

export class SigningKeyRepository {
  constructor(private readonly orm: MikroORM) {}

  /** Unretired keys, newest first. */
  listUsable(): Promise<SigningKeyRow[]> {
    return guarded(() => this.orm.em.fork().find(SigningKeyEntity, { retiredAt: null }, { orderBy: { createdAt: 'desc', kid: 'desc' } }));
  }

  insert(key: NewSigningKey): Promise<void> {
    return guarded(async () => {
      const em = this.orm.em.fork();
      em.create(SigningKeyEntity, { ...key, createdAt: new Date(), retiredAt: null });
      await em.flush();
    });
  }

  /**
   * Inserts a key made by `generate` unless an unretired key exists. Replicas starting
   * together serialise on an advisory lock, so the first start creates exactly one key.
   */
  ensureOne(generate: () => Promise<NewSigningKey>): Promise<void> {
    return guarded(async () => {
      await this.orm.em.fork().transactional(async (em) => {
        await em.execute(`select pg_advisory_xact_lock(hashtext('auth:signing-key'))`);
        const found = await em.execute('select 1 from "auth"."signing_key" where "retired_at" is null limit 1');
        if (found.length > 0) return;
        em.create(SigningKeyEntity, { ...(await generate()), createdAt: new Date(), retiredAt: null });
      });
    });
  }
}
