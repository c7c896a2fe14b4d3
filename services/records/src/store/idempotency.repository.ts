/**
 * SQL of `records.idempotency_key` (idempotency.migration.ts). A claim is one statement: the
 * insert takes a new scope, or takes over one whose answer expired or whose claim's lease ran
 * out with the same body; otherwise the row as it is says what the caller gets.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import type { ClaimOutcome, IdempotencyStore, StoredAnswer } from '../domain/idempotency/idempotency.keys.js';

interface Row {
  claim: string;
  taken: boolean;
  body_hash: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
}

export class IdempotencyRepository implements IdempotencyStore {
  constructor(private readonly db: Knex) {}

  claim(scope: string, bodyHash: string, claim: string, leaseMs: number, keepMs: number): Promise<ClaimOutcome> {
    return guarded(() => this.claimOnce(scope, bodyHash, claim, leaseMs, keepMs));
  }

  private async claimOnce(scope: string, bodyHash: string, claim: string, leaseMs: number, keepMs: number): Promise<ClaimOutcome> {
    // `taken` is true only for the row this statement wrote; the second select reads the row
    // another request holds (the statement's snapshot cannot see a row that conflicted, so it
    // is read again after the insert).
    const res = await this.db.raw<{ rows: Row[] }>(
      `with ins as (
         insert into records.idempotency_key as k (scope, body_hash, claim, lease_until, expires_at)
         values (?, ?, ?::uuid, clock_timestamp() + ? * interval '1 millisecond', clock_timestamp() + ? * interval '1 millisecond')
         on conflict (scope) do update
           set body_hash = excluded.body_hash, claim = excluded.claim, lease_until = excluded.lease_until,
               expires_at = excluded.expires_at, status = null, headers = null, body = null, created_at = clock_timestamp()
         where k.expires_at < clock_timestamp()
            or (k.status is null and k.lease_until < clock_timestamp() and k.body_hash = excluded.body_hash)
         returning claim::text, true as taken, body_hash, status, headers, body
       )
       select * from ins`,
      [scope, bodyHash, claim, leaseMs, keepMs],
    );
    if (res.rows[0]) return { outcome: 'claimed', claim };
    const held = await this.db.raw<{ rows: Row[] }>(
      `select claim::text, false as taken, body_hash, status, headers, body from records.idempotency_key where scope = ?`,
      [scope],
    );
    const row = held.rows[0];
    // Released in between: try once more from the top.
    if (!row) return this.claimOnce(scope, bodyHash, claim, leaseMs, keepMs);
    if (row.body_hash !== bodyHash) return { outcome: 'conflict' };
    if (row.status === null) return { outcome: 'in_flight' };
    return { outcome: 'replay', answer: { status: row.status, headers: row.headers ?? {}, body: row.body ?? '' } };
  }

  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean> {
    return guarded(() => this.finishOnce(scope, claim, answer));
  }

  private async finishOnce(scope: string, claim: string, answer: StoredAnswer): Promise<boolean> {
    const res = await this.db.raw<{ rowCount: number }>(
      `update records.idempotency_key set status = ?, headers = ?::jsonb, body = ?
        where scope = ? and claim = ?::uuid and status is null`,
      [answer.status, JSON.stringify(answer.headers), answer.body, scope, claim],
    );
    return res.rowCount > 0;
  }

  release(scope: string, claim: string): Promise<void> {
    return guarded(async () => {
      await this.db.raw(`delete from records.idempotency_key where scope = ? and claim = ?::uuid and status is null`, [scope, claim]);
    });
  }

  sweep(limit: number): Promise<number> {
    return guarded(() => this.sweepOnce(limit));
  }

  private async sweepOnce(limit: number): Promise<number> {
    const res = await this.db.raw<{ rowCount: number }>(
      `delete from records.idempotency_key
        where scope in (select scope from records.idempotency_key where expires_at < clock_timestamp() limit ?)
          and expires_at < clock_timestamp()`,
      [limit],
    );
    return res.rowCount;
  }
}
