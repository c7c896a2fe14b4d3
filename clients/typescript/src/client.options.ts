/**
 * The public option and answer types of the client (reelbase.client.ts), re-exported from there
 * and from index.ts.
 */
import type { RetryOptions } from './retry.policy.js';
import type { ResponseBody, Schemas } from './types.js';

export interface ReelbaseOptions {
  /** The gateway's address, e.g. `http://localhost:8080`. */
  url: string;
  /** An API key (`svc_...`) or a login token. */
  apiKey?: string;
  /** Log in with these instead (on the first call). */
  email?: string;
  password?: string;
  /** No connection within this: a `TimeoutError` (default 10 s). */
  connectTimeoutMs?: number;
  /** No byte of the answer for this long: a `TimeoutError` (default 30 s). */
  readTimeoutMs?: number;
  /** Retry settings (retry.policy.ts); `{ retries: 0 }` turns retries off. */
  retry?: Partial<RetryOptions>;
  /** Told about each retry (never with the credentials). */
  onRetry?: (info: { method: string; path: string; attempt: number; delayMs: number; reason: string }) => void;
  /** Sent as `User-Agent`. */
  userAgent?: string;
}

/** The answer of `request`: status, headers and parsed body, whatever the status. */
export interface RawAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RawOptions {
  body?: unknown;
  /** Sent verbatim (e.g. malformed JSON); overrides `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** Bearer token for this call; `null` sends none; undefined: the client's own. */
  token?: string | null;
  /** Retry as the typed calls do (default false: one exchange, whatever comes back). */
  retry?: boolean;
}

/** A ShotGrid-style filter: `[["code", "is", "SH010"], ...]` or `{"filter_operator": "any", "filters": [...]}`. */
export type Filters = Schemas['QueryBody']['filters'];
export type Order = NonNullable<Schemas['QueryBody']['order']>;

export interface FindOptions {
  fields?: string[];
  order?: Order;
  /** The most records to return; null or undefined: all of them (`find` pages through). */
  limit?: number | null;
  /** Records per page (1..1000, default 500). */
  pageSize?: number;
  includeRetired?: boolean;
}

export interface WriteOptions {
  project_id?: string | null;
  status?: string | null;
  active?: boolean;
  thumbnail_id?: string | null;
  /** An Idempotency-Key of your own (e.g. kept across a restart of your tool); one is made up otherwise. */
  idempotencyKey?: string;
}

export interface UpdateOptions extends Omit<WriteOptions, 'idempotencyKey'> {
  /** Write only if the record is unchanged since this `updated_at` (or ETag); else `Conflict` `stale_write`. */
  ifMatch?: string;
}

/** One request of a batch: a create, an update (data merged) or a delete of one record. */
export type BatchRequest = Schemas['BatchRequest'];
/** A summary of `POST /entities/{Type}/summarize`: `{ field, type }` (and `value` for `percentage`). */
export type SummaryField = Schemas['SummarizeBody']['summary_fields'][number];
/** A grouping level: `{ field, type: 'exact' | 'day' | 'week' | 'month' | 'year', direction? }`. */
export type Grouping = NonNullable<Schemas['SummarizeBody']['grouping']>[number];
export type SummaryGroup = Schemas['SummaryGroup'];
export type Summary = Schemas['Summaries'];

export interface EventsOptions {
  /** Events after this id; default: the newest when following, else 0 (the whole log). */
  after?: number;
  entityType?: string;
  projectId?: string;
  /** Keep waiting for new events (default false: stop at the end of the log). */
  follow?: boolean;
  /** Wait between polls once caught up (default 1 s). */
  pollMs?: number;
  /** Events per page (default 1000). */
  pageSize?: number;
  /** Stops a follower. */
  signal?: AbortSignal;
  /** Told about each failure the follower rides out (it keeps going from the last event it gave). */
  onError?: (err: unknown) => void;
}

export interface UploadOptions {
  /** Called as bytes leave: sent so far, and the file's size. */
  progress?: (sent: number, total: number) => void;
  /** Overrides the type guessed from the extension (video/* or image/*). */
  contentType?: string;
}

/** One page of `POST /entities/{Type}/query`. */
export type QueryPage = ResponseBody<'/entities/{entity_type}/query', 'post'>;
