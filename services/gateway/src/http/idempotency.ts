/**
 * `Idempotency-Key` on POST (docs/api-notes.md, "Idempotent retries"). The key is scoped by
 * principal, method and concrete path; the records service keeps each scope's body hash and,
 * once the request ends, its answer (status, the headers worth repeating, body) for 24 hours.
 * A repeat with the same body gets that answer again without running the route; with another
 * body, 409 `idempotency_conflict`; while the first still runs, the repeat waits for it (up to
 * {@link IN_FLIGHT_WAIT_MS}, then 409 `idempotency_in_progress`). A 5xx or 429 answer is not
 * kept: the key is released and a retry runs again. Only writes are kept: a route whose answer
 * is read-only or carries a credential or a lease checks the key and stores nothing
 * (`RouteDef.replayable`). A principal holds at most `maxKeys` live keys. A POST costs records
 * one call for its key (Claim) and one for its answer (Finish or Release) around the route, except
 * a write that carries its key (`RouteDef.keyInWrite`: a record create, a batch), whose one records
 * call claims the key, writes and stores the answer (docs/architecture.md, "Idempotency keys").
 */
import { createHash } from 'node:crypto';
import { AppError, canonicalJson, type CallContext, type Problem, type PromiseClient } from '@reelbase/lib-platform';
import { idempotencyv1 } from '@reelbase/proto';
import type { Request } from 'express';

/** The request header, as express lower-cases it. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
/** How long an answer is kept. */
export const KEEP_MS = 24 * 3600 * 1000;
/** How long a claim holds a key before a retry with the same body may take it over. */
export const LEASE_MS = 150_000;
/** How long a repeat waits for the first request with its key to end. */
export const IN_FLIGHT_WAIT_MS = 30_000;
/** The response header set on an answer given again. */
export const REPLAYED_HEADER = 'idempotent-replayed';
/** Response headers stored with an answer and repeated with it. */
const KEPT_HEADERS = ['content-type', 'etag', 'location'];

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

export type IdempotencyClient = PromiseClient<idempotencyv1.IdempotencyServiceClient>;

/** One answer as sent (or to be sent again). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The request's key: undefined without the header; a problem located at the header when it is
 * not 1..255 printable ASCII characters.
 */
export function idempotencyKeyOf(req: Request, problems: Problem[]): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!PRINTABLE_ASCII.test(value)) {
    problems.push({
      loc: ['header', IDEMPOTENCY_HEADER],
      msg: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
      type: 'value_error',
    });
    return undefined;
  }
  return value;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The key's scope: who (a user, or a guest by the path's link), which method, which concrete path, which key. */
export function scopeOf(principalId: string, method: string, path: string, key: string): string {
  return sha256([principalId, method.toUpperCase(), path, key].join('\u0000'));
}

/** The hash of what the request asks: its body and query, canonical. */
export function bodyHashOf(body: unknown, query: unknown): string {
  return sha256(`${canonicalJson(body)}\u0000${canonicalJson(query ?? {})}`);
}

/** The headers of `headers` worth repeating, lower-cased. */
export function keptHeaders(headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    const name = k.toLowerCase();
    if (KEPT_HEADERS.includes(name) && v !== undefined) out[name] = String(v);
  }
  return out;
}

/** True when an answer of `status` is kept: every answer below 500 except 429 (try again later); lib-platform's, which records uses too. */
export { isKeptStatus as isKept } from '@reelbase/lib-platform';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const Outcome = idempotencyv1.IdempotencyServiceClaimResponse_Outcome;

/** Live keys a principal may hold by default (`IDEMPOTENCY_MAX_KEYS`). */
export const MAX_KEYS = 10_000;
/** Repeats of one key that may wait at once on one gateway; more are told at once that it is in progress. */
export const MAX_WAITERS_PER_KEY = 8;
/** The first pause between two looks at a key still in flight, and the longest (the pause doubles). */
const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 2_000;

/** A claimed key: finish it with the answer, or release it. */
export interface Claimed {
  finish(answer: Answer): Promise<void>;
  release(): Promise<void>;
}

/** What a claim asks for: the key's scope, the body it came with, who holds it and how many keys they may hold. */
export interface KeyClaim {
  scope: string;
  bodyHash: string;
  /** `user:<id>`, or for a guest `link:<SHA-256 of the path>` (see {@link principalOf}). */
  principal: string;
  /** Live keys the principal may hold (0: no limit). */
  maxKeys: number;
}

/** Who holds a key: a user by id; a guest by the share link in the path (guests of one link share its allowance). */
export function principalOf(userId: string | undefined, path: string): string {
  return userId ? `user:${userId}` : `link:${sha256(path)}`;
}

/**
 * The repeats waiting for a key's first request to end, counted per scope on this gateway, so a
 * client hammering one key in flight holds at most {@link MAX_WAITERS_PER_KEY} requests open.
 */
export class KeyWaiters {
  private readonly waiting = new Map<string, number>();

  constructor(private readonly max = MAX_WAITERS_PER_KEY) {}

  /** Counts one more waiter of `scope`; false (nothing counted) when `max` already wait. */
  enter(scope: string): boolean {
    const n = this.waiting.get(scope) ?? 0;
    if (n >= this.max) return false;
    this.waiting.set(scope, n + 1);
    return true;
  }

  leave(scope: string): void {
    const n = (this.waiting.get(scope) ?? 1) - 1;
    if (n <= 0) this.waiting.delete(scope);
    else this.waiting.set(scope, n);
  }

  /** Scopes with a waiter (for tests). */
  get size(): number {
    return this.waiting.size;
  }
}

const inProgress = (waitMs: number) =>
  AppError.conflict(
    'idempotency_in_progress',
    `the first request with this Idempotency-Key is still running after ${Math.round(waitMs / 1000)} s; retry later with the same key`,
  );

type ClaimResponse = idempotencyv1.IdempotencyServiceClaimResponse;

/** The stored answer of a replay, as sent again. */
function replayOf(answer: idempotencyv1.IdempotentAnswer): Answer {
  let headers: Record<string, string> = {};
  try {
    headers = JSON.parse(answer.headersJson || '{}') as Record<string, string>;
  } catch {
    headers = {};
  }
  return { status: answer.status, headers, body: answer.body };
}

/**
 * Looks at the key until it settles: `look` either settles (`{ done }`: the key was claimed, or the
 * write that carried it ran) or answers the key's outcome. A stored answer is `{ replay }`; another
 * body: 409 `idempotency_conflict`; still running after the wait (or too many repeats already
 * waiting for it): 409 `idempotency_in_progress`, each look after a doubling pause; a new key while
 * the principal holds `maxKeys` live keys: 429 with `Retry-After` (until its oldest expires).
 */
async function settle<T>(
  look: () => Promise<{ done: T } | { key: ClaimResponse }>,
  want: Pick<KeyClaim, 'scope' | 'maxKeys'>,
  waiters: KeyWaiters,
  waitMs: number,
): Promise<{ done: T } | { replay: Answer }> {
  const { scope } = want;
  const until = Date.now() + waitMs;
  let pause = FIRST_PAUSE_MS;
  let waiting = false;
  try {
    for (;;) {
      const r = await look();
      if ('done' in r) return r;
      const { outcome, answer, retryAfterMs } = r.key;
      if (outcome === Outcome.OUTCOME_REPLAY && answer) return { replay: replayOf(answer) };
      if (outcome === Outcome.OUTCOME_CONFLICT) {
        throw AppError.conflict('idempotency_conflict', 'this Idempotency-Key was used with another request body; use a new key for a new request');
      }
      if (outcome === Outcome.OUTCOME_LIMITED) {
        throw new AppError(
          'rate_limited',
          `this caller already holds ${want.maxKeys} live Idempotency-Keys (each kept 24 hours); reuse a key for a retry, or wait until the oldest expires`,
          { retryAfter: Math.max(1, Math.ceil(retryAfterMs / 1000)) },
        );
      }
      if (!waiting) {
        if (!waiters.enter(scope)) throw inProgress(0);
        waiting = true;
      }
      if (Date.now() + pause > until) throw inProgress(waitMs);
      await sleep(pause);
      pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    }
  } finally {
    if (waiting) waiters.leave(scope);
  }
}

/** The claim as records takes it: the lease and the keep are the gateway's. */
const claimRequestOf = (want: KeyClaim): idempotencyv1.IdempotencyServiceClaimRequest => ({
  scope: want.scope,
  bodyHash: want.bodyHash,
  leaseMs: LEASE_MS,
  keepMs: KEEP_MS,
  principal: want.principal,
  maxKeys: want.maxKeys,
});

/**
 * Claims the key: `{ replay }` when an answer is stored for the same body, `{ claimed }` when
 * the request is to run now (then finish or release it); otherwise as {@link settle} says.
 */
export async function claimKey(
  client: IdempotencyClient,
  want: KeyClaim,
  ctx: CallContext,
  waiters: KeyWaiters,
  waitMs = IN_FLIGHT_WAIT_MS,
): Promise<{ replay: Answer } | { claimed: Claimed }> {
  const { scope } = want;
  const claimed = (claim: string): Claimed => ({
    finish: async (answer) => {
      await client.finish({ scope, claim, answer: { status: answer.status, headersJson: JSON.stringify(answer.headers), body: answer.body } }, ctx);
    },
    release: async () => {
      await client.release({ scope, claim }, ctx);
    },
  });
  const r = await settle<Claimed>(
    async () => {
      const key = await client.claim(claimRequestOf(want), ctx);
      return key.outcome === Outcome.OUTCOME_CLAIMED ? { done: claimed(key.claim) } : { key };
    },
    want,
    waiters,
    waitMs,
  );
  return 'done' in r ? { claimed: r.done } : r;
}

/**
 * What the handler of a write that carries its key answers when records did not run it: the key's
 * outcome (a replay, another body, still running, too many keys). {@link keyedAnswer} makes it.
 */
export class KeyOutcome {
  constructor(readonly key: ClaimResponse) {}
}

/**
 * A keyed write's answer from its response: the key's outcome when records says the write did not
 * run, else `reply()` (docs/architecture.md, "Idempotency keys").
 */
export function keyedAnswer(key: ClaimResponse | undefined, reply: () => unknown): unknown {
  return key ? new KeyOutcome(key) : reply();
}

/** The key a write carries to records (`RouteDef.keyInWrite`): the claim, and where its request's names are. */
export function keyedWriteOf(want: KeyClaim, pathParams: Iterable<string>, queryParams: Iterable<string>): idempotencyv1.IdempotentWrite {
  return { claim: claimRequestOf(want), pathParams: [...pathParams], queryParams: [...queryParams] };
}

/**
 * Runs a write that carries its key (one records call claims, writes and stores the answer):
 * `{ done }` with the handler's answer when it ran; `{ replay }` with the stored answer; another
 * body, too many keys or still running after the wait: thrown as {@link claimKey} throws them.
 * A key still in flight is looked at again by running the write again, the same one call.
 */
export function writeWithKey(
  run: () => unknown,
  want: Pick<KeyClaim, 'scope' | 'maxKeys'>,
  waiters: KeyWaiters,
  waitMs = IN_FLIGHT_WAIT_MS,
): Promise<{ done: unknown } | { replay: Answer }> {
  return settle(
    async () => {
      const out = await run();
      return out instanceof KeyOutcome ? { key: out.key } : { done: out };
    },
    want,
    waiters,
    waitMs,
  );
}
