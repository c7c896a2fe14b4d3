/**
 * A small HTTP client for the gateway: JSON in and out, a bearer token per call, and the
 * status, headers and parsed body of every answer (never throws on a status).
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** Sent verbatim (for malformed JSON); overrides `body`. */
  rawBody?: string;
  /** Bearer token; `null` sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | null = null,
  ) {}

  /** The same client acting with another token. */
  as(token: string | null): Api {
    return new Api(this.baseUrl, token);
  }

  async call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? this.token : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
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
