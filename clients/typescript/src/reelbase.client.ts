/**
 * The client: typed calls of every route (`call`), the conveniences pipeline code wants (paging,
 * idempotent creates, uploads, waiting, following events) and a raw `request` that never throws.
 *
 * Safe to share: it keeps no per-call state, so any number of calls may run at once. Every call
 * has timeouts (connect 10 s, read 30 s by default) and is retried with back-off on connection
 * failures, 502/503/504 and 429 (honouring `Retry-After`) when that cannot do a thing twice
 * (retry.policy.ts). The API key or token is never logged, printed or put in an error.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { inspect } from 'node:util';
import type {
  BatchRequest,
  EventsOptions,
  Filters,
  FindOptions,
  Grouping,
  QueryPage,
  RawAnswer,
  RawOptions,
  ReelbaseOptions,
  Summary,
  SummaryField,
  UpdateOptions,
  UploadOptions,
  WriteOptions,
} from './client.options.js';
import { CONTENT_TYPES, JSON_TYPE, fillPath, parseBody, seg, sleep, withQuery } from './client.support.js';
import { ConnectionError, ReelbaseError, TimeoutError, errorFromAnswer } from './errors.js';
import { exchange, type Answer } from './http.transport.js';
import { DEFAULT_RETRY, mayRetry, retryDelayMs, type RetryOptions } from './retry.policy.js';
import type { CallOptions, EntityRecord, Method, PathsWith, ReelEvent, RequestBody, ResponseBody, Schemas, paths } from './types.js';

export class Reelbase {
  readonly url: string;
  #credential: string | undefined;
  #login: { email: string; password: string } | undefined;
  #loggingIn: Promise<string> | undefined;
  readonly #connectTimeoutMs: number;
  readonly #readTimeoutMs: number;
  readonly #retry: RetryOptions;
  readonly #onRetry: ReelbaseOptions['onRetry'];
  readonly #userAgent: string;

  constructor(opts: ReelbaseOptions | string) {
    const o: ReelbaseOptions = typeof opts === 'string' ? { url: opts } : opts;
    if (!/^https?:\/\//.test(o.url)) throw new TypeError(`the server address must start with http:// or https://, not ${JSON.stringify(o.url)}`);
    this.url = o.url.replace(/\/+$/, '');
    this.#credential = o.apiKey;
    if (o.email !== undefined || o.password !== undefined) {
      if (o.email === undefined || o.password === undefined) throw new TypeError('give both email and password, or an apiKey');
      this.#login = { email: o.email, password: o.password };
    }
    this.#connectTimeoutMs = o.connectTimeoutMs ?? 10_000;
    this.#readTimeoutMs = o.readTimeoutMs ?? 30_000;
    this.#retry = { ...DEFAULT_RETRY, ...o.retry };
    this.#onRetry = o.onRetry;
    this.#userAgent = o.userAgent ?? `reelbase-client-ts/0.0.1 node/${process.versions.node}`;
  }

  /** Never shows the credentials (console.log, util.inspect, JSON.stringify). */
  [inspect.custom](): string {
    return `Reelbase { url: '${this.url}' }`;
  }
  toJSON(): { url: string } {
    return { url: this.url };
  }

  // ---------------------------------------------------------------- transport

  async #token(): Promise<string | undefined> {
    if (this.#credential !== undefined || !this.#login) return this.#credential;
    this.#loggingIn ??= (async () => {
      const ans = await this.#send('POST', '/auth/login', { body: JSON.stringify(this.#login), token: null, idempotent: true });
      const token = (ans.body as { access_token: string }).access_token;
      this.#credential = token;
      return token;
    })().finally(() => (this.#loggingIn = undefined));
    return this.#loggingIn;
  }

  /**
   * One logical request, retried by the policy. Throws a `ReelbaseError` subclass for an error
   * answer (after the retries), returns the parsed answer otherwise.
   */
  async #send(
    method: string,
    path: string,
    o: {
      body?: string | Buffer | (() => import('node:stream').Readable);
      bodyLength?: number;
      contentType?: string;
      headers?: Record<string, string>;
      token?: string | null;
      idempotencyKey?: string;
      /** Retry even without an Idempotency-Key (the request is harmless to repeat). */
      idempotent?: boolean;
      retry?: boolean;
      throwOnError?: boolean;
      onProgress?: (sent: number, total: number | undefined) => void;
      readTimeoutMs?: number;
    } = {},
  ): Promise<RawAnswer> {
    const token = o.token === undefined ? await this.#token() : o.token;
    const headers: Record<string, string> = { accept: JSON_TYPE, 'user-agent': this.#userAgent, ...o.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    if (o.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = o.contentType ?? JSON_TYPE;
    if (o.idempotencyKey) headers['idempotency-key'] = o.idempotencyKey;
    const keyed = o.idempotent === true || o.idempotencyKey !== undefined;
    const retries = o.retry === false ? 0 : this.#retry.retries;
    const url = new URL(this.url + path);
    for (let attempt = 0; ; attempt++) {
      let ans: Answer | undefined;
      let failure: ReelbaseError;
      try {
        ans = await exchange({
          method,
          url,
          headers,
          body: o.body,
          bodyLength: o.bodyLength,
          connectTimeoutMs: this.#connectTimeoutMs,
          readTimeoutMs: o.readTimeoutMs ?? this.#readTimeoutMs,
          onProgress: o.onProgress,
        });
        const body = parseBody(ans.text);
        if (ans.status < 400) return { status: ans.status, headers: ans.headers, body, text: ans.text };
        failure = errorFromAnswer(method, path, ans.status, body, ans.headers);
        if (o.throwOnError === false && !(attempt < retries && mayRetry(method, failure, keyed))) {
          return { status: ans.status, headers: ans.headers, body, text: ans.text };
        }
      } catch (err) {
        if (!(err instanceof ConnectionError)) throw err;
        failure = err;
      }
      const retryable = mayRetry(method, failure, keyed);
      const delay = retryable && attempt < retries ? retryDelayMs(attempt + 1, this.#retry, ans?.headers.get('retry-after')) : undefined;
      if (delay === undefined) {
        if (ans && o.throwOnError === false) return { status: ans.status, headers: ans.headers, body: parseBody(ans.text), text: ans.text };
        throw failure;
      }
      this.#onRetry?.({ method, path, attempt: attempt + 1, delayMs: delay, reason: failure.status ? `${failure.status} ${failure.code}` : failure.code });
      await sleep(delay);
    }
  }

  /**
   * Any route, typed from the OpenAPI document: `params` fill the path, `body` and the answer
   * have the route's types. POSTs carry an Idempotency-Key (made up unless given).
   */
  async call<M extends Method, P extends PathsWith<M>>(method: M, path: P, ...[opts]: CallArgs<P, M>): Promise<ResponseBody<P, M>> {
    const o = (opts ?? {}) as {
      params?: Record<string, unknown>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers?: Record<string, string>;
      idempotencyKey?: string;
    };
    const m = method.toUpperCase();
    const ans = await this.#send(m, withQuery(fillPath(path, o.params), o.query), {
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      headers: o.headers,
      idempotencyKey: m === 'POST' ? (o.idempotencyKey ?? randomUUID()) : undefined,
    });
    return ans.body as ResponseBody<P, M>;
  }

  /**
   * One exchange with any path, returning status, headers and body without throwing on an error
   * status (tests, and routes newer than this client). Not retried unless `retry` is set.
   */
  async request<T = any>(method: string, path: string, opts: RawOptions = {}): Promise<RawAnswer<T>> {
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    return this.#send(method.toUpperCase(), path, {
      body,
      headers: opts.headers,
      token: opts.token,
      retry: opts.retry ?? false,
      idempotent: opts.retry ?? false,
      throwOnError: false,
    }) as Promise<RawAnswer<T>>;
  }

  /** The same client acting with another token or API key (`null`: anonymous). */
  as(apiKey: string | null): Reelbase {
    const c = new Reelbase({
      url: this.url,
      apiKey: apiKey ?? undefined,
      connectTimeoutMs: this.#connectTimeoutMs,
      readTimeoutMs: this.#readTimeoutMs,
      retry: this.#retry,
      onRetry: this.#onRetry,
      userAgent: this.#userAgent,
    });
    return c;
  }

  // ---------------------------------------------------------------- records

  /** One page of a query (`cursor` from the previous page's `next_cursor`). */
  async query(entityType: string, body: Schemas['QueryBody']): Promise<QueryPage> {
    // A query changes nothing: retried without a key.
    const ans = await this.#send('POST', `/entities/${seg(entityType)}/query`, { body: JSON.stringify(body), idempotent: true });
    return ans.body as QueryPage;
  }

  /** Every matching record (or the first `limit`), following cursors lazily, one page at a time. */
  async *iterFind(entityType: string, filters: Filters = [], opts: FindOptions = {}): AsyncGenerator<EntityRecord> {
    let left = opts.limit ?? Infinity;
    let cursor: string | null = null;
    while (left > 0) {
      const page: QueryPage = await this.query(entityType, {
        filters,
        ...(opts.fields ? { fields: opts.fields } : {}),
        ...(opts.order ? { order: opts.order } : {}),
        ...(opts.includeRetired ? { include_retired: true } : {}),
        limit: Math.max(1, Math.min(opts.pageSize ?? 500, 1000, left)),
        ...(cursor ? { cursor } : {}),
      });
      for (const r of page.items) {
        if (left-- <= 0) return;
        yield r;
      }
      cursor = page.next_cursor;
      if (!cursor || page.items.length === 0) return;
    }
  }

  /** Every matching record (or the first `limit`) as an array. */
  async find(entityType: string, filters: Filters = [], opts: FindOptions = {}): Promise<EntityRecord[]> {
    const out: EntityRecord[] = [];
    for await (const r of this.iterFind(entityType, filters, opts)) out.push(r);
    return out;
  }

  /** The first matching record, or null. */
  async findOne(entityType: string, filters: Filters = [], opts: Omit<FindOptions, 'limit'> = {}): Promise<EntityRecord | null> {
    const [first] = await this.find(entityType, filters, { ...opts, limit: 1 });
    return first ?? null;
  }

  /** One record (`NotFound` when missing or retired). */
  get(entityType: string, id: string): Promise<EntityRecord> {
    return this.call('get', '/entities/{entity_type}/{id}', { params: { entity_type: entityType, id } });
  }

  /** Creates a record; a retry after a lost answer returns the same record (Idempotency-Key), never a second one. */
  create(entityType: string, data: Record<string, unknown>, opts: WriteOptions = {}): Promise<EntityRecord> {
    const { idempotencyKey, ...columns } = opts;
    return this.call('post', '/entities/{entity_type}', { params: { entity_type: entityType }, body: { ...columns, data }, idempotencyKey });
  }

  /** Updates a record: `data` merged key by key (null removes a key), plus the columns given. */
  update(entityType: string, id: string, data: Record<string, unknown> = {}, opts: UpdateOptions = {}): Promise<EntityRecord> {
    const { ifMatch, ...columns } = opts;
    const headers = ifMatch ? { 'if-match': ifMatch.startsWith('"') ? ifMatch : `"${ifMatch}"` } : undefined;
    return this.call('patch', '/entities/{entity_type}/{id}', { params: { entity_type: entityType, id }, body: { ...columns, data }, headers });
  }

  /** Retires a record (it can be revived). */
  delete(entityType: string, id: string): Promise<Schemas['RecordRetired']> {
    return this.call('delete', '/entities/{entity_type}/{id}', { params: { entity_type: entityType, id } });
  }

  /** Brings a retired record back. */
  revive(entityType: string, id: string): Promise<EntityRecord> {
    return this.call('post', '/entities/{entity_type}/{id}/revive', { params: { entity_type: entityType, id } });
  }

  /** Several writes in one transaction, all or nothing; results in request order (a record, or true for a delete). */
  batch(requests: BatchRequest[], opts: { idempotencyKey?: string } = {}): Promise<(EntityRecord | true)[]> {
    return this.call('post', '/batch', { body: { requests }, idempotencyKey: opts.idempotencyKey }).then((out) => out.results);
  }

  /** Totals over the matching records, optionally grouped (up to three levels). */
  async summarize(entityType: string, filters: Filters, summaryFields: SummaryField[], opts: { grouping?: Grouping[] } = {}): Promise<Summary> {
    const body: RequestBody<'/entities/{entity_type}/summarize', 'post'> = {
      filters,
      summary_fields: summaryFields,
      ...(opts.grouping ? { grouping: opts.grouping } : {}),
    };
    // Reads only: repeated freely, with no Idempotency-Key (nothing worth keeping on the server).
    const ans = await this.#send('POST', `/entities/${seg(entityType)}/summarize`, { body: JSON.stringify(body), idempotent: true });
    return ans.body as Summary;
  }

  /** The whole schema: entity types and fields, statuses, steps, priorities, workflows, ... */
  schema(): Promise<ResponseBody<'/schema', 'get'>> {
    return this.call('get', '/schema');
  }

  /** The Notes linked to a record, oldest first. */
  async notesFor(entityType: string, id: string): Promise<EntityRecord[]> {
    const out = await this.call('get', '/entities/{entity_type}/{record_id}/notes', { params: { entity_type: entityType, record_id: id } });
    return out.items;
  }

  /** The caller: their User record, role and how they authenticated. */
  me(): Promise<ResponseBody<'/me', 'get'>> {
    return this.call('get', '/me');
  }

  // ---------------------------------------------------------------- media

  /** Uploads a reviewable for a Version, streaming the file from disk (never held in memory). */
  async uploadReviewable(versionId: string, file: string, opts: UploadOptions = {}): Promise<ResponseBody<'/versions/{id}/reviewable', 'post'>> {
    const size = statSync(file).size;
    const contentType = opts.contentType ?? CONTENT_TYPES[extname(file).toLowerCase()] ?? 'video/octet-stream';
    const ans = await this.#send('POST', `/versions/${seg(versionId)}/reviewable`, {
      body: () => createReadStream(file, { highWaterMark: 256 * 1024 }),
      bodyLength: size,
      contentType,
      headers: { 'x-file-name': encodeURIComponent(basename(file)) },
      idempotencyKey: randomUUID(),
      onProgress: opts.progress ? (sent) => opts.progress!(sent, size) : undefined,
    });
    return ans.body as ResponseBody<'/versions/{id}/reviewable', 'post'>;
  }

  /** The transcode status of a Version's latest reviewable (`NotFound` before any upload). */
  reviewable(versionId: string): Promise<ResponseBody<'/versions/{id}/reviewable', 'get'>> {
    return this.call('get', '/versions/{id}/reviewable', { params: { id: versionId } });
  }

  /** Waits until the Version's reviewable is `done` or `failed` and returns its status (`TimeoutError` after `timeoutMs`, default 10 min). */
  async waitReviewable(
    versionId: string,
    opts: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
  ): Promise<ResponseBody<'/versions/{id}/reviewable', 'get'>> {
    const deadline = Date.now() + (opts.timeoutMs ?? 600_000);
    for (;;) {
      try {
        const st = await this.reviewable(versionId);
        if (st.status === 'done' || st.status === 'failed') return st;
      } catch (err) {
        // No reviewable yet (an upload still arriving): keep waiting.
        if (!(err instanceof ReelbaseError) || err.status !== 404) throw err;
      }
      if (Date.now() >= deadline || opts.signal?.aborted) {
        throw new TimeoutError(`the reviewable of Version ${versionId} was not done within ${opts.timeoutMs ?? 600_000} ms`, { code: 'wait_timeout' });
      }
      await sleep(Math.min(opts.pollMs ?? 1000, Math.max(0, deadline - Date.now())), opts.signal);
    }
  }

  // ---------------------------------------------------------------- events

  /** The newest event id (0 for an empty log). */
  async lastEventId(): Promise<number> {
    const page = await this.call('get', '/events', { query: { limit: 1 } });
    return page.items[0]?.id ?? 0;
  }

  /**
   * Events in id order from `after` on. With `follow`, waits for new ones forever (until `signal`),
   * riding out server restarts and network failures: it always resumes after the last event it
   * gave, so nothing is skipped and nothing comes twice.
   */
  async *events(opts: EventsOptions = {}): AsyncGenerator<ReelEvent> {
    let cursor = opts.after ?? (opts.follow ? await this.lastEventId() : 0);
    let failures = 0;
    while (!opts.signal?.aborted) {
      let page: Schemas['EventList'];
      try {
        page = await this.call('get', '/events', {
          query: { after: cursor, limit: opts.pageSize ?? 1000, entity_type: opts.entityType, project_id: opts.projectId },
        });
        failures = 0;
      } catch (err) {
        const transient = err instanceof ConnectionError || (err instanceof ReelbaseError && (err.status === 429 || err.status >= 500));
        if (!opts.follow || !transient) throw err;
        opts.onError?.(err);
        failures++;
        await sleep(retryDelayMs(Math.min(failures, 6), this.#retry) ?? 1000, opts.signal);
        continue;
      }
      for (const ev of page.items) {
        if (ev.id <= cursor) continue;
        cursor = ev.id;
        yield ev;
        if (opts.signal?.aborted) return;
      }
      const full = page.items.length >= (opts.pageSize ?? 1000) || page.next_cursor;
      if (full) continue;
      if (!opts.follow) return;
      await sleep(opts.pollMs ?? 1000, opts.signal);
    }
  }
}

type CallArgs<P extends keyof paths, M extends Method> = [PathParamsRequired<P, M>] extends [true] ? [opts: CallOptions<P, M>] : [opts?: CallOptions<P, M>];
type PathParamsRequired<P extends keyof paths, M extends Method> = CallOptions<P, M> extends { params: unknown } ? true : false;
