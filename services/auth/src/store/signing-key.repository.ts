/**
 * JWT signing keys. The newest key signs; every key whose `retired_at` is unset or still ahead
 * verifies. Private keys are stored sealed (`private_key_sealed`, lib-platform's SecretCipher
 * under SECRETS_KEY, bound to the row's kid); `private_jwk` is only ever read to seal rows
 * written before keys were sealed, and is emptied then.
 */
import type { Knex, MikroORM } from '@mikro-orm/postgresql';
import { guarded, sqlRows, SECRETS_KEY_REMEDY, SecretCipherError, type SecretCipher } from '@reelbase/lib-platform';
import type { StoredSigningKey } from '../domain/ports.js';

export type NewSigningKey = Pick<StoredSigningKey, 'kid' | 'privateJwk' | 'publicJwk'>;

interface Row {
  kid: string;
  private_key_sealed: string | null;
  private_jwk: Record<string, unknown> | null;
  public_jwk: Record<string, unknown>;
  retires_in_ms: string | number | null;
}

/** The additional data a private key is sealed with: the row it belongs to. */
const contextOf = (kid: string) => `auth.signing_key:${kid}`;

export class SigningKeyRepository {
  constructor(
    private readonly orm: MikroORM,
    private readonly cipher: SecretCipher,
  ) {}

  private get db(): Knex {
    return this.orm.em.getConnection().getKnex();
  }

  /** Keys not yet retired, newest first, each with the time left until its retirement (database clock). */
  listUsable(): Promise<StoredSigningKey[]> {
    return guarded(async () => {
      const rows = await sqlRows<Row>(
        this.db,
        `select "kid", "private_key_sealed", "private_jwk", "public_jwk",
                floor(extract(epoch from ("retired_at" - clock_timestamp())) * 1000) as "retires_in_ms"
           from "auth"."signing_key"
          where "retired_at" is null or "retired_at" > clock_timestamp()
          order by "created_at" desc, "kid" desc`,
      );
      return rows.map((r) => ({
        kid: r.kid,
        privateJwk: this.privateOf(r),
        publicJwk: r.public_jwk,
        retiresInMs: r.retires_in_ms === null ? null : Number(r.retires_in_ms),
      }));
    });
  }

  /** Inserts `key` and retires every older key `retireAfterMs` from now (never later than already due). */
  rotate(key: NewSigningKey, retireAfterMs: number): Promise<number> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:signing-key'))`);
        const retired = await sqlRows<{ kid: string }>(
          trx,
          `update "auth"."signing_key"
              set "retired_at" = least(coalesce("retired_at", 'infinity'), now() + (? * interval '1 millisecond'))
            where "retired_at" is null or "retired_at" > now()
          returning "kid"`,
          [retireAfterMs],
        );
        await this.insertWith(trx, key);
        return retired.length;
      }),
    );
  }

  /**
   * Inserts a key made by `generate` unless a usable key exists. Replicas starting
   * together serialise on an advisory lock, so the first start creates exactly one key.
   */
  ensureOne(generate: () => Promise<NewSigningKey>): Promise<void> {
    return guarded(async () => {
      await this.db.transaction(async (trx) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:signing-key'))`);
        const found = await sqlRows(trx, 'select 1 from "auth"."signing_key" where "retired_at" is null or "retired_at" > now() limit 1');
        if (found.length > 0) return;
        await this.insertWith(trx, await generate());
      });
    });
  }

  /**
   * Seals every private key still stored in clear (rows from before keys were sealed) or sealed
   * with a key other than the current SECRETS_KEY (after a key rotation), and erases the private
   * key of every retired key (it never signs or verifies again; the public key stays). Run at
   * start-up; replicas starting together serialise on the signing-key lock. Returns how many rows
   * it sealed.
   */
  sealStored(): Promise<number> {
    return guarded(() =>
      this.db.transaction(async (trx) => {
        await trx.raw(`select pg_advisory_xact_lock(hashtext('auth:signing-key'))`);
        await trx.raw(
          `update "auth"."signing_key" set "private_key_sealed" = null, "private_jwk" = null
            where "retired_at" <= now() and ("private_key_sealed" is not null or "private_jwk" is not null)`,
        );
        const rows = await sqlRows<Row>(
          trx,
          `select "kid", "private_key_sealed", "private_jwk", "public_jwk", null as "retires_in_ms" from "auth"."signing_key"
            where "private_key_sealed" is not null or "private_jwk" is not null`,
        );
        let sealed = 0;
        for (const r of rows) {
          if (r.private_key_sealed && this.cipher.isCurrent(r.private_key_sealed) && r.private_jwk === null) continue;
          const value = this.cipher.seal(JSON.stringify(this.privateOf(r)), contextOf(r.kid));
          await trx.raw('update "auth"."signing_key" set "private_key_sealed" = ?, "private_jwk" = null where "kid" = ?', [value, r.kid]);
          sealed++;
        }
        return sealed;
      }),
    );
  }

  private privateOf(r: Row): Record<string, unknown> {
    if (r.private_key_sealed) {
      try {
        return JSON.parse(this.cipher.open(r.private_key_sealed, contextOf(r.kid))) as Record<string, unknown>;
      } catch (err) {
        if (!(err instanceof SecretCipherError)) throw err;
        throw new Error(`the private key of signing key ${r.kid} cannot be decrypted (${err.message}): ${SECRETS_KEY_REMEDY}`, { cause: err });
      }
    }
    if (r.private_jwk) return r.private_jwk;
    throw new Error(`signing key ${r.kid} has no private key`);
  }

  private async insertWith(trx: Knex.Transaction, key: NewSigningKey): Promise<void> {
    await trx.raw(
      `insert into "auth"."signing_key" ("kid", "private_key_sealed", "private_jwk", "public_jwk", "created_at", "retired_at")
       values (?, ?, null, ?::jsonb, now(), null)`,
      [key.kid, this.cipher.seal(JSON.stringify(key.privateJwk), contextOf(key.kid)), JSON.stringify(key.publicJwk)],
    );
  }
}
