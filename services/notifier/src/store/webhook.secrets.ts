/**
 * Webhook secrets at rest (docs/notifier.md, "Target checks"): sealed with lib-platform's SecretCipher
 * under SECRETS_KEY and bound to their webhook's id, so the column never holds a secret in
 * clear and a value copied to another webhook does not open. Secrets stored before sealing
 * (or by a replica of an earlier version during a rolling update) are read as they are and
 * sealed at the next start ({@link sealStoredWebhookSecrets}).
 */
import type { Knex } from '@mikro-orm/postgresql';
import { SECRETS_KEY_REMEDY, SecretCipher, SecretCipherError } from '@reelbase/lib-platform';

type Db = Knex | Knex.Transaction;

const contextOf = (webhookId: string) => `notifier.webhook:${webhookId}`;
const actionContextOf = (deliveryId: string) => `notifier.action_delivery:${deliveryId}`;

export class WebhookSecrets {
  constructor(private readonly cipher: SecretCipher) {}

  /** The stored form of `secret` for webhook `webhookId`. */
  seal(webhookId: string, secret: string): string {
    return this.cipher.seal(secret, contextOf(webhookId));
  }

  /** The secret itself from its stored form (a value stored in clear is returned as it is). */
  open(webhookId: string, stored: string): string {
    return SecretCipher.isSealed(stored) ? this.cipher.open(stored, contextOf(webhookId)) : stored;
  }

  /** The stored form of a webhook action's `secret` for its delivery `deliveryId`. */
  sealAction(deliveryId: string, secret: string): string {
    return this.cipher.seal(secret, actionContextOf(deliveryId));
  }

  /** The secret of an action delivery from its stored form. */
  openAction(deliveryId: string, stored: string): string {
    return this.cipher.open(stored, actionContextOf(deliveryId));
  }

  /**
   * Seals every secret stored in clear or with an earlier SECRETS_KEY; returns how many. Each row
   * changes only if nobody changed it meanwhile, so replicas starting together agree.
   */
  async sealStored(db: Db): Promise<number> {
    const res = await db.raw<{ rows: Array<{ id: string; secret: string }> }>('select id, secret from notifier.webhook where secret is not null');
    let sealed = 0;
    for (const r of res.rows) {
      if (this.cipher.isCurrent(r.secret)) continue;
      let plain: string;
      try {
        plain = this.open(r.id, r.secret);
      } catch (err) {
        if (!(err instanceof SecretCipherError)) throw err;
        throw new Error(`the secret of webhook ${r.id} cannot be decrypted (${err.message}): ${SECRETS_KEY_REMEDY}`, { cause: err });
      }
      const value = this.seal(r.id, plain);
      const upd = await db.raw<{ rowCount: number }>('update notifier.webhook set secret = ? where id = ? and secret = ?', [value, r.id, r.secret]);
      sealed += upd.rowCount;
    }
    return sealed;
  }
}
