/**
 * API keys: only their sha256 and a display prefix are stored. Read through the entity, written in
 * SQL on the ORM's Knex (docs/architecture.md, "Storage: MikroORM and Knex").
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlRows } from '@reelbase/lib-platform';
import { ApiKeyEntity, type ApiKeyRow } from './auth.entities.js';

export class ApiKeyRepository {
  constructor(private readonly orm: MikroORM) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  insert(row: Omit<ApiKeyRow, 'createdAt' | 'lastUsedAt' | 'revokedAt'>, maxLive: number): Promise<ApiKeyRow | null> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        // One issue at a time per user, so two replicas can never both take the last place.
        await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:api-keys:' || ?))`, [row.userId]);
        const [live] = await sqlRows<{ n: string }>(
          trx,
          `select count(*) as n from "auth"."api_key"
            where "user_id" = ? and "revoked_at" is null and ("expires_at" is null or "expires_at" > now())`,
          [row.userId],
        );
        if (Number(live?.n ?? 0) >= maxLive) return null;
        const key: ApiKeyRow = {
          ...row,
          createdAt: new Date(),
          lastUsedAt: null,
          revokedAt: null,
          expiresAt: row.expiresAt ?? null,
          scope: row.scope ?? null,
          pools: row.pools ?? null,
        };
        await trx.raw(
          `insert into "auth"."api_key" ("id", "user_id", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at", "expires_at", "scope", "pools")
           values (?, ?, ?, ?, ?, ?, null, null, ?, ?, ?::jsonb)`,
          [
            key.id,
            key.userId,
            key.name,
            key.prefix,
            key.keyHash,
            key.createdAt,
            key.expiresAt ?? null,
            key.scope ?? null,
            key.pools ? JSON.stringify(key.pools) : null,
          ],
        );
        return key;
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
      const rows = await sqlRows(this.db, 'update "auth"."api_key" set "revoked_at" = now() where "id" = ? and "revoked_at" is null returning "id"', [id]);
      return rows.length > 0;
    });
  }

  /** Revokes every active key of `userId`; returns their ids. */
  revokeAllOf(userId: string): Promise<string[]> {
    return guarded(async () => {
      const rows = await sqlRows<{ id: string }>(
        this.db,
        'update "auth"."api_key" set "revoked_at" = now() where "user_id" = ? and "revoked_at" is null returning "id"',
        [userId],
      );
      return rows.map((r) => r.id);
    });
  }

  /** Records a use; the condition keeps this to at most one write a minute per key. */
  touch(id: string): Promise<void> {
    return guarded(async () => {
      await this.db.raw(
        `update "auth"."api_key" set "last_used_at" = now()
            where "id" = ? and ("last_used_at" is null or "last_used_at" < now() - interval '1 minute')`,
        [id],
      );
    });
  }
}
