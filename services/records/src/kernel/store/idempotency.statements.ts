/**
 * The statement that stores a claimed key's answer in `records.idempotency_key`
 * (idempotency/store/idempotency.migration.ts), shared by the idempotency module (Finish) and the
 * writes that carry their key (a batch stores its answer in its own transaction; docs/architecture.md,
 * "Idempotency keys").
 */
import type { IdempotencyClaim } from '../domain/record.ports.js';
import type { StoredAnswer } from '../domain/idempotency.types.js';
import type { Db } from './knex.db.js';

/**
 * Stores `answer` for the key while `key.claim` still holds it and no answer is stored; false when
 * the claim was taken over (its lease ran out) or already answered.
 */
export async function storeAnswer(db: Db, key: IdempotencyClaim, answer: StoredAnswer): Promise<boolean> {
  const res = await db.raw<{ rowCount: number }>(
    `update records.idempotency_key set status = ?, headers = ?::jsonb, body = ?
      where scope = ? and claim = ?::uuid and status is null`,
    [answer.status, JSON.stringify(answer.headers), answer.body, key.scope, key.claim],
  );
  return res.rowCount > 0;
}
