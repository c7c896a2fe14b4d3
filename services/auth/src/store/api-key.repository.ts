/**
 * API keys: only their sha256 and a display prefix are stored.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { dbError } from '@reelbase/lib-platform';
import { ApiKeyEntity, type ApiKeyRow } from './auth.entities.js';

export class ApiKeyRepository {
  constructor(private readonly orm: MikroORM) {}

  async insert(row: Omit<ApiKeyRow, 'createdAt' | 'lastUsedAt' | 'revokedAt'>): Promise<ApiKeyRow> {
    try {
      const em = this.orm.em.fork();
      const entity = em.create(ApiKeyEntity, { ...row, createdAt: new Date(), lastUsedAt: null, revokedAt: null });
      await em.persistAndFlush(entity);
      return entity;
    } catch (err) {
      return dbError(err);
    }
  }

  async findByHash(keyHash: string): Promise<ApiKeyRow | null> {
    try {
      return await this.orm.em.fork().findOne(ApiKeyEntity, { keyHash });
    } catch (err) {
      return dbError(err);
    }
  }

  async findById(id: string): Promise<ApiKeyRow | null> {
    try {
      return await this.orm.em.fork().findOne(ApiKeyEntity, { id });
    } catch (err) {
      return dbError(err);
    }
  }

  /** The user's keys that are not revoked, oldest first. */
  async listActive(userId: string): Promise<ApiKeyRow[]> {
    try {
      return await this.orm.em.fork().find(ApiKeyEntity, { userId, revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    } catch (err) {
      return dbError(err);
    }
  }

  /** Marks the key revoked; false when it was already revoked or does not exist. */
  async revoke(id: string): Promise<boolean> {
    try {
      const rows = await this.orm.em
        .getConnection()
        .execute('update "auth"."api_key" set "revoked_at" = now() where "id" = ? and "revoked_at" is null returning "id"', [id]);
      return rows.length > 0;
    } catch (err) {
      return dbError(err);
    }
  }

  /** Records a use; the condition keeps this to at most one write a minute per key. */
  async touch(id: string): Promise<void> {
    try {
      await this.orm.em
        .getConnection()
        .execute(
          `update "auth"."api_key" set "last_used_at" = now()
            where "id" = ? and ("last_used_at" is null or "last_used_at" < now() - interval '1 minute')`,
          [id],
        );
    } catch (err) {
      return dbError(err);
    }
  }
}
