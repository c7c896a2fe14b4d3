/**
 * A tiny fetch-based client for tests: JSON in, parsed JSON, status and headers out.
 */
export interface CallOptions {
  token?: string;
  body?: unknown;
  /** A raw body sent as is (malformed JSON, oversize bodies). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

export function httpClient(baseUrl: () => string) {
  return async function call(method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(baseUrl() + path, { method, headers, body });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}
