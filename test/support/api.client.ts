/**
 * The tests' HTTP client for the gateway: the raw `request` of the project's TypeScript client
 * (@reelbase/client), with a bearer token per call and the status, headers and parsed body of
 * every answer (never throws on a status, never retries).
 */
import { Reelbase, type RawAnswer } from '@reelbase/client';

export type ApiResponse<T = any> = RawAnswer<T>;

export interface CallOptions {
  body?: unknown;
  /** Sent verbatim (malformed JSON, a file's bytes); overrides `body`. */
  rawBody?: string | Buffer;
  /** Bearer token; `null` sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
}

export class Api {
  private readonly raw: Reelbase;

  constructor(
    readonly baseUrl: string,
    private readonly token: string | null = null,
  ) {
    this.raw = new Reelbase({ url: baseUrl, retry: { retries: 0 } });
  }

  /** The same client acting with another token. */
  as(token: string | null): Api {
    return new Api(this.baseUrl, token);
  }

  /** The full client (paging, idempotent creates, uploads, events) acting with this token. */
  client(options: { retries?: number } = {}): Reelbase {
    return new Reelbase({
      url: this.baseUrl,
      apiKey: this.token ?? undefined,
      retry: options.retries === undefined ? undefined : { retries: options.retries },
    });
  }

  call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
    return this.raw.request<T>(method, path, {
      body: opts.body,
      rawBody: opts.rawBody,
      headers: opts.headers,
      token: opts.token === undefined ? this.token : opts.token,
    });
  }

  get<T = any>(path: string, opts?: CallOptions) {
    return this.call<T>('GET', path, opts);
  }
  post<T = any>(path: string, body?: unknown, opts?: CallOptions) {
    return this.call<T>('POST', path, { ...opts, body });
  }
  patch<T = any>(path: string, body?: unknown, opts?: CallOptions) {
    return this.call<T>('PATCH', path, { ...opts, body });
  }
  delete<T = any>(path: string, opts?: CallOptions) {
    return this.call<T>('DELETE', path, opts);
  }
}

/** Throws with the whole answer when the status is not the expected one; returns the body. */
export function expectStatus<T = any>(res: ApiResponse<T>, status: number, what = 'request'): T {
  if (res.status !== status) {
    throw new Error(`${what}: expected HTTP ${status}, got ${res.status}: ${res.text.slice(0, 2000)}`);
  }
  return res.body;
}

/** Retries `fn` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T | undefined>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what} did not hold within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
