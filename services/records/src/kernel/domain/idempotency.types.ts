/**
 * An Idempotency-Key as every module of the records service sees it (docs/api-notes.md,
 * "Idempotent retries"; docs/architecture.md, "Idempotency keys"): a claim, what became of it, and
 * the answer it keeps. The idempotency module owns the keys (idempotency/); a write that carries its
 * key (core's create and batch) stores its answer in its own transaction.
 */

/** The answer a key gives again: as the gateway sends it (status, the headers worth repeating, body). */
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

/**
 * A write that carries its key: the claim, and the names of the request's path and query
 * parameters, so a kept 422 locates its problems as the gateway does.
 */
export interface KeyedWrite {
  claim: ClaimRequest;
  pathParams: readonly string[];
  queryParams: readonly string[];
}

/** What a write that carried its key came to: it ran (`done`), or the key says why not (`key`). */
export type Keyed<T> = { done: T } | { key: Exclude<ClaimOutcome, { outcome: 'claimed' }> };
