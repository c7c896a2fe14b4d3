/**
 * What idempotency keys need from storage (docs/api-notes.md, "Idempotent retries"); store/idempotency.repository.ts.
 */

/** The answer a key gives again. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimOutcome =
  | { outcome: 'claimed'; claim: string }
  | { outcome: 'replay'; answer: StoredAnswer }
  | { outcome: 'conflict' }
  | { outcome: 'in_flight' }
  /** A new key, and its principal already holds `maxKeys` live keys: retry after `retryAfterMs` (its oldest key expires). */
  | { outcome: 'limited'; retryAfterMs: number };

/** A claim as the gateway asks it. */
export interface ClaimRequest {
  scope: string;
  bodyHash: string;
  leaseMs: number;
  keepMs: number;
  /** Who holds the key (`user:<id>`; a guest: `link:<SHA-256 of the share link's path>`): live keys are counted per principal. */
  principal: string;
  /** Live keys a principal may hold; 0: no limit. */
  maxKeys: number;
}

export interface IdempotencyStore {
  /** Claims `req.scope` under the new claim token `claim`. */
  claim(req: ClaimRequest, claim: string): Promise<ClaimOutcome>;
  finish(scope: string, claim: string, answer: StoredAnswer): Promise<boolean>;
  release(scope: string, claim: string): Promise<void>;
  /** Deletes up to `limit` expired keys; how many went. */
  sweep(limit: number): Promise<number>;
}
