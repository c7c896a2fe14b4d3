/**
 * API keys: only their sha256 and a display prefix are stored.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import { ApiKeyEntity, type ApiKeyRow } from './auth.entities.js';

export class ApiKeyRepository {
  constructor(private readonly orm: MikroORM) {}

  insert(row: Omit<ApiKeyRow, 'createdAt' | 'lastUsedAt' | 'revokedAt'>, maxLive: number): Promise<ApiKeyRow | null> {
    return guarded(() =>
      this.orm.em.fork().transactional(async (em) => {
        // One issue at a time per user, so two replicas can never both take the last place.
        await em.execute(`select pg_advisory_xact_lock(hashtext('auth:api-keys:' || ?))`, [row.userId]);
        const [live] = await em.execute<{ n: string }[]>(
          `select count(*) as n from "auth"."api_key"
            where "user_id" = ? and "revoked_at" is null and ("expires_at" is null or "expires_at" > now())`,
          [row.userId],
        );
        if (Number(live?.n ?? 0) >= maxLive) return null;
        const entity = em.create(ApiKeyEntity, { ...row, createdAt: new Date(), lastUsedAt: null, revokedAt: null });
        em.persist(entity);
        return entity;
      }),
    );
  }

  findByHash(keyHash: string): Promise<ApiKeyRow | null> {
    return guarded(() => this.orm.em.fork().findOne(ApiKeyEntity, { keyHash }));
  }

  findById(id: string): Promise<ApiKeyRow | null> {
    return guarded(() => this.orm.em.fork().findOne(ApiKeyEntity, { id }));
  }

  /** The user's keys that are not revoked, oldest first. */
  listActive(userId: string): Promise<ApiKeyRow[]> {
    return guarded(() => this.orm.em.fork().find(ApiKeyEntity, { userId, revokedAt: null }, { orderBy: { createdAt: 'asc', id: 'asc' } }));
  }

  /** Marks the key revoked; false when it was already revoked or does not exist. */
  revoke(id: string): Promise<boolean> {
    return guarded(async () => {
      const rows = await this.orm.em
        .getConnection()
        .execute('update "auth"."api_key" set "revoked_at" = now() where "id" = ? and "revoked_at" is null returning "id"', [id]);
      return rows.length > 0;
    });
  }

  /** Revokes every active key of `userId`; returns their ids. */
  revokeAllOf(userId: string): Promise<string[]> {
    return guarded(async () => {
      const rows = await this.orm.em
        .getConnection()
        .execute<{ id: string }[]>('update "auth"."api_key" set "revoked_at" = now() where "user_id" = ? and "revoked_at" is null returning "id"', [userId]);
      return rows.map((r) => r.id);
    });
  }

  /** Records a use; the condition keeps this to at most one write a minute per key. */
  touch(id: string): Promise<void> {
    return guarded(async () => {
      await this.orm.em.getConnection().execute(
        `update "auth"."api_key" set "last_used_at" = now()
            where "id" = ? and ("last_used_at" is null or "last_used_at" < now() - interval '1 minute')`,
        [id],
      );
    });
  }
}
