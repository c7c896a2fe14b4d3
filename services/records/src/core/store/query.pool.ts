/**
 * The pool queries and summaries run on (docs/queries.md, "Statement timeout"): the long reads'
 * pool, its own connections, so a burst of slow queries never takes the connections writes need,
 * each opened read-only and with `statement_timeout` set, so PostgreSQL cancels a query statement
 * that runs longer (SQLSTATE 57014) without an extra round trip per query. Its statements are
 * `$n` SQL text run on a pooled connection (lib-platform's `queryText`): a query is one statement
 * with bound parameters, so the query builder's per-statement work would be pure overhead on the
 * hot path (docs/queries.md, "The request path").
 */
import { AppError, openSqlPool } from '@reelbase/lib-platform';
import type { Knex } from '@mikro-orm/postgresql';

export interface QueryPoolOptions {
  databaseUrl: string;
  /** statement_timeout of every connection, in ms. */
  timeoutMs: number;
  /** Most connections open at once. */
  max: number;
}

/** Opens the `queries` pool of records: read-only connections with the query statement timeout. */
export function openQueryPool(o: QueryPoolOptions): Knex {
  return openSqlPool({
    name: 'queries',
    application: 'records',
    databaseUrl: o.databaseUrl,
    max: o.max,
    statementTimeoutMs: Math.max(1, Math.trunc(o.timeoutMs)),
    // A query never writes: this pool cannot, whatever SQL it is handed.
    settings: { default_transaction_read_only: 'on' },
  });
}

/** Summaries that may wait for a slot of their gate at once (beyond: 503 `busy` at once). */
export const SUMMARY_LINE = 20;

/**
 * At most `max` callers at once on the query pool for a kind of statement that may run long (a
 * summary aggregates a whole type): the pool's other connections stay free for short queries
 * and single reads. Others wait in line, at most `maxWaiting` of them and each at most
 * `waitMs`, then are answered 503 `busy` (try again shortly) rather than held.
 */
export class QueryGate {
  private held = 0;
  private readonly line: (() => void)[] = [];

  constructor(
    readonly max: number,
    private readonly waitMs: number,
    private readonly maxWaiting: number,
    private readonly what: string,
  ) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.held < this.max) this.held += 1;
    else await this.turn();
    try {
      return await fn();
    } finally {
      // The slot goes straight to the next in line, or is freed.
      const next = this.line.shift();
      if (next) next();
      else this.held -= 1;
    }
  }

  /** Callers holding a slot, and waiting for one (for tests and metrics). */
  get load(): { held: number; waiting: number } {
    return { held: this.held, waiting: this.line.length };
  }

  private turn(): Promise<void> {
    const busy = () => new AppError('unavailable', `${this.max} ${this.what} are running already; try again shortly`, { code: 'busy', retryAfter: 1 });
    if (this.line.length >= this.maxWaiting) return Promise.reject(busy());
    return new Promise((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.line.indexOf(go);
        if (at >= 0) this.line.splice(at, 1);
        reject(busy());
      }, this.waitMs);
      this.line.push(go);
    });
  }
}
