/**
 * One HTTP exchange over node:http / node:https with the timeouts a pipeline tool needs: a
 * connect timeout, and a read timeout that bounds every silence (waiting for the answer, or
 * between two pieces of it) rather than the whole exchange, so a long upload or a large page
 * never times out while bytes flow. Bodies are strings, buffers or streams made on demand (a
 * retry makes a fresh one, e.g. re-opens the file).
 */
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { ConnectionError, TimeoutError } from './errors.js';

export interface Exchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The body: text, bytes, or a function making a stream of `bodyLength` bytes. */
  body?: string | Buffer | (() => Readable);
  bodyLength?: number;
  connectTimeoutMs: number;
  readTimeoutMs: number;
  /** Called as the body is sent: bytes sent so far, and the total when known. */
  onProgress?: (sent: number, total: number | undefined) => void;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** Keep-alive agents shared by the clients of one process (per protocol). */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 }),
};

function headersOf(res: http.IncomingMessage): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}

/** Sends one request; a connection reused from the pool that turns out closed is retried once on a new one. */
export async function exchange(x: Exchange): Promise<Answer> {
  try {
    return await once(x, false);
  } catch (err) {
    if (err instanceof StaleConnection) return once(x, true);
    throw err;
  }
}

/** A pooled connection the server had closed before this request reached it. */
class StaleConnection extends Error {}

function once(x: Exchange, fresh: boolean): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const lib = x.url.protocol === 'https:' ? https : http;
    const agent = agents[x.url.protocol as 'http:' | 'https:'];
    const headers: Record<string, string> = { ...x.headers };
    if (x.body !== undefined) {
      const length = typeof x.body === 'function' ? x.bodyLength : Buffer.byteLength(x.body);
      if (length !== undefined) headers['content-length'] = String(length);
    }
    const req = lib.request(x.url, { method: x.method, headers, agent: fresh ? false : agent });
    let answered = false;
    let settled = false;
    let source: Readable | undefined;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      source?.destroy();
      const e = err as NodeJS.ErrnoException;
      if (err instanceof ConnectionError) return reject(err);
      if (!answered && req.reusedSocket && !fresh && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) return reject(new StaleConnection());
      reject(new ConnectionError(`${x.method} ${x.url.pathname}: ${e.code ?? ''} ${e.message}`.trim(), { code: e.code ?? 'connection_error', cause: err }));
    };
    req.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => req.destroy(new TimeoutError(`${x.method} ${x.url.host}: no connection within ${x.connectTimeoutMs} ms`, { code: 'connect_timeout' })),
        x.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    req.setTimeout(x.readTimeoutMs, () =>
      req.destroy(new TimeoutError(`${x.method} ${x.url.pathname}: no answer for ${x.readTimeoutMs} ms`, { code: 'read_timeout' })),
    );
    req.on('error', fail);
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('aborted', () => fail(Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' })));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        // The server answered early (e.g. 413 during an upload): stop sending the rest.
        source?.destroy();
        resolve({ status: res.statusCode ?? 0, headers: headersOf(res), text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    if (typeof x.body === 'function') {
      const stream = x.body();
      source = stream;
      let sent = 0;
      stream.on('data', (c: Buffer) => {
        sent += c.length;
        x.onProgress?.(sent, x.bodyLength);
      });
      stream.on('error', (err) => req.destroy(err));
      stream.pipe(req);
    } else {
      if (x.body !== undefined) req.write(x.body);
      req.end();
    }
  });
}
