/**
 * SQL of `records.idempotency_key` (idempotency.migration.ts). A claim is one statement: the
 * insert takes a new scope, or takes over one whose answer expired or whose claim's lease ran
 * out with the same body; otherwise the row as it is says what the caller gets.
 */
import type { Knex } from '@mikro-orm/postgresql';
import { guarded } from '@reelbase/lib-platform';
import { toView } from '../../kernel/domain/record.ports.js';
import { toClientRecord } from '../../kernel/domain/record.types.js';
import { toStored, type Row as RecordRow } from '../../kernel/store/record.repository.js';
import { storeAnswer } from '../../kernel/store/idempotency.statements.js';
import type { ClaimOutcome, ClaimRequest, IdempotencyStore, StoredAnswer } from '../domain/idempotency.ports.js';

interface Row {
  claim: string;
  taken: boolean;
  body_hash: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: string | null;
  /** The record a create stored with the key in its own statement (record.repository.ts, insertWithEvent). */
  record: RecordRow | null;
}

/**
 * The answer of a create whose record was stored with the key: what the gateway answers for a
 * record (200, its JSON in the client form, its ETag).
 */
function recordAnswer(row: RecordRow): StoredAnswer {
  const record = toClientRecord(toView(toStored(row)));
  return { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', etag: `"${record.updated_at}"` }, body: JSON.stringify(record) };
}

export class IdempotencyRepository implements IdempotencyStore {
  constructor(private readonly db: Knex) {}

  claim(req: ClaimRequest, claim: string): Promise<ClaimOutcome> {
    return guarded(() => this.claimOnce(req, claim));
  }

  private async claimOnce(req: ClaimRequest, claim: string): Promise<ClaimOutcome> {
    const { scope, bodyHash, leaseMs, keepMs, principal, maxKeys } = req;
    // `taken` is true only for the row this statement wrote; the second select reads the row
    // another request holds (the statement's snapshot cannot see a row that conflicted, so it
    // is read again after the insert). A scope that is not stored yet is a new key: it is
    // written only while the principal holds fewer than `maxKeys` live keys (counted through
    // idempotency_key_principal_idx, at most `maxKeys` index entries read).
    const res = await this.db.raw<{ rows: Row[] }>(
      `with ins as (
         insert into records.idempotency_key as k (scope, body_hash, claim, lease_until, expires_at, principal)
         select ?, ?, ?::uuid, clock_timestamp() + ? * interval '1 millisecond', clock_timestamp() + ? * interval '1 millisecond', ?
          where ?::int = 0
             or exists (select 1 from records.idempotency_key where scope = ?)
             or (select count(*) from (select 1 from records.idempotency_key
                                        where principal = ? and expires_at > clock_timestamp() limit ?::int) live) < ?::int
         on conflict (scope) do update
           set body_hash = excluded.body_hash, claim = excluded.claim, lease_until = excluded.lease_until,
               expires_at = excluded.expires_at, principal = excluded.principal,
               status = null, headers = null, body = null, record = null, created_at = clock_timestamp()
         where k.expires_at < clock_timestamp()
            or (k.status is null and k.lease_until < clock_timestamp() and k.body_hash = excluded.body_hash)
         returning claim::text, true as taken, body_hash, status, headers, body, record
       )
       select * from ins`,
      [scope, bodyHash, claim, leaseMs, keepMs, principal, maxKeys, scope, principal, maxKeys, maxKeys],
    );
    if (res.rows[0]) return (await this.overLimit(req, claim)) ?? { outcome: 'claimed', claim };
    const held = await this.db.raw<{ rows: Row[] }>(
      `select claim::text, false as taken, body_hash, status, headers, body, record from records.idempotency_key where scope = ?`,
      [scope],
    );
    const row = held.rows[0];
    if (!row) {
      const limited = await this.limitOf(principal, maxKeys);
      if (limited) return limited;
      // Released in between: try once more from the top.
      return this.claimOnce(req, claim);
    }
    if (row.body_hash !== bodyHash) return { outcome: 'conflict' };
    if (row.status === null) return { outcome: 'in_flight' };
    if (row.record) return { outcome: 'replay', answer: recordAnswer(row.record) };
    return { outcome: 'replay', answer: { status: row.status, headers: row.headers ?? {}, body: row.body ?? '' } };
  }

  /**
   * The count before the insert cannot see keys other requests of the principal insert at the
   * same moment, so the key just written is counted again, now that it is committed: when the
   * principal holds more than `maxKeys`, this one is taken back (`limited`). Of requests racing
   * for the last places, the one counting last sees every key written before its count, so the
   * principal never ends up holding more than `maxKeys`.
   */
  private async overLimit({ principal, maxKeys, scope }: ClaimRequest, claim: string): Promise<ClaimOutcome | undefined> {
    if (maxKeys === 0) return undefined;
    const res = await this.db.raw<{ rows: { removed: boolean }[] }>(
      `with live as (select count(*) as n from (select 1 from records.idempotency_key
                                                  where principal = ? and expires_at > clock_timestamp() limit ?::int + 1) c),
            gone as (delete from records.idempotency_key where scope = ? and claim = ?::uuid and (select n from live) > ?::int returning 1)
       select exists (select 1 from gone) as removed`,
      [principal, maxKeys, scope, claim, maxKeys],
    );
    return res.rows[0]?.removed ? ((await this.limitOf(principal, maxKeys)) ?? { outcome: 'limited', retryAfterMs: 1000 }) : undefined;
  }

  /** `limited` when `principal` holds `maxKeys` live keys, with the wait until the oldest expires; else undefined. */
  private async limitOf(principal: string, maxKeys: number): Promise<ClaimOutcome | undefined> {
    if (maxKeys === 0) return undefined;
    const res = await this.db.raw<{ rows: { live: string; wait_ms: number | null }[] }>(
      `select count(*) as live,
              (select ceil(extract(epoch from (min(expires_at) - clock_timestamp())) * 1000)::int
                 from records.idempotency_key where principal = ? and expires_at > clock_timestamp()) as wait_ms
         from (select 1 from records.idempotency_key where principal = ? and expires_at > clock_timestamp() limit ?::int) live`,
      [principal, principal, maxKeys],
    );
    const r = res.rows[0];
    if (!r || Number(r.live) < maxKeys) return undefined;
    return { outcome: 'limited', retryAfterMs: Math.max(1000, r.wait_ms ?? 1000) };
  }

  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean> {
    return guarded(() => storeAnswer(this.db, { scope, claim }, answer));
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
