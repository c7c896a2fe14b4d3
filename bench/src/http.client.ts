/**
 * A lean keep-alive HTTP/1.1 client for latency loops: `node:http` over one kept socket, the
 * answer read as one string. `fetch` (undici) spends 1.6–2.3 ms of CPU per request on this
 * machine, on the measured path and on the same two cores as the services; this client spends a
 * fraction of that, so a figure through the gateway carries less of the client's own cost
 * (bench/README.md, "Queries on 1,000,000 records").
 */
import http from 'node:http';

export interface Answer {
  status: number;
  text: string;
}

export class LeanClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly base: URL;

  constructor(baseUrl: string) {
    this.base = new URL(baseUrl);
  }

  /** One request; rejects on a socket error or after `timeoutMs` without an answer. */
  request(method: string, path: string, headers: Record<string, string>, body?: string, timeoutMs = 60_000): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.base.hostname,
          port: this.base.port,
          method,
          path,
          agent: this.agent,
          headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          timeout: timeoutMs,
        },
        (res) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * One JSON exchange by `fetch` for the set-up around the timed loops (not on a measured path):
 * the status and the parsed body; `token` null sends no Authorization header.
 */
export async function call(url: string, method: string, path: string, token: string | null, body?: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(new URL(path, url), {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : null };
}
