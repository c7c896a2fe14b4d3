/**
 * One HTTP attempt of a delivery (docs/notifier.md, "Delivery"): a POST with the stored body,
 * bounded by a timeout over the whole attempt, no redirects followed, and the first 2 KiB of
 * the answer kept. Unless private targets are allowed, the address actually connected to is
 * checked: a host name is resolved by the agent's own `lookup`, which drops every address the
 * target policy refuses (so a name that resolves to a private address after the webhook was
 * created, DNS rebinding included, never reaches it), an IP literal is checked before
 * connecting, and the socket's remote address is checked again once connected.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { blockedAddressReason, parseTargetUrl } from '../domain/target.policy.js';

/** Bytes of the answer body kept on the delivery. */
export const RESPONSE_KEEP_BYTES = 2048;

export interface SendOutcome {
  /** HTTP status, null when no answer came. */
  statusCode: number | null;
  latencyMs: number;
  /** The first {@link RESPONSE_KEEP_BYTES} of the answer body (UTF-8, lossy, NUL characters dropped). */
  response: string | null;
  /** Why the attempt failed without an answer (or with a non-2xx one: null). */
  error: string | null;
  /** True when the address check refused the target (nothing was sent). */
  blocked: boolean;
}

export interface HttpSenderOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  userAgent: string;
  /** Sockets kept per target host (the engine sends one attempt per webhook at a time). */
  maxSockets?: number;
}

class BlockedTargetError extends Error {
  readonly code = 'EBLOCKED';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export class HttpSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly opts: HttpSenderOptions) {
    const lookup = opts.allowPrivate ? undefined : guardedLookup;
    const agentOpts = { keepAlive: true, maxSockets: opts.maxSockets ?? 64, maxFreeSockets: 16, scheduling: 'lifo' as const, ...(lookup ? { lookup } : {}) };
    this.httpAgent = new http.Agent(agentOpts);
    this.httpsAgent = new https.Agent(agentOpts);
  }

  /** POSTs `body` to `url` with `headers`; never throws. */
  send(url: string, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const fail = (error: string, blocked = false): SendOutcome => ({ statusCode: null, latencyMs: elapsed(), response: null, error, blocked });
    const target = parseTargetUrl(url);
    if (typeof target === 'string') return Promise.resolve(fail(`invalid URL: ${target}`));
    if (!this.opts.allowPrivate && isIP(target.host)) {
      const why = blockedAddressReason(target.host);
      if (why) return Promise.resolve(fail(`blocked: ${target.host} is ${why}`, true));
    }
    const isHttps = target.url.protocol === 'https:';
    const payload = Buffer.from(body, 'utf8');
    return new Promise<SendOutcome>((resolve) => {
      let settled = false;
      const finish = (o: SendOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(o);
      };
      const req = (isHttps ? https : http).request(target.url, {
        method: 'POST',
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        headers: { ...headers, 'content-length': String(payload.length) },
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`timeout after ${this.opts.timeoutMs} ms`));
      }, this.opts.timeoutMs);
      req.on('socket', (socket: Socket) => {
        if (this.opts.allowPrivate) return;
        const check = () => {
          const addr = socket.remoteAddress;
          const why = addr ? blockedAddressReason(addr) : 'unknown';
          if (why) req.destroy(new BlockedTargetError(`blocked: connected address ${addr ?? '?'} is ${why}`));
        };
        if (socket.remoteAddress) check();
        else socket.once('connect', check);
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        const blocked = err instanceof BlockedTargetError || err.code === 'EBLOCKED';
        finish(fail(err.message || err.code || 'request failed', blocked));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = (complete: boolean) => {
          // PostgreSQL text cannot hold NUL: a receiver answering binary must not stop its outcome being recorded.
          const text = Buffer.concat(chunks)
            .subarray(0, RESPONSE_KEEP_BYTES)
            .toString('utf8')
            .replace(/\u0000/g, '');
          finish({ statusCode: res.statusCode ?? null, latencyMs: elapsed(), response: text, error: null, blocked: false });
          // A body past what is kept is not read to its end: the socket is dropped instead.
          if (!complete) res.destroy();
        };
        res.on('data', (c: Buffer) => {
          if (kept >= RESPONSE_KEEP_BYTES) return;
          chunks.push(c);
          kept += c.length;
          if (kept >= RESPONSE_KEEP_BYTES) done(false);
        });
        res.on('end', () => done(true));
        res.on('error', () => done(false));
        res.on('aborted', () => done(false));
      });
      req.end(payload);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/**
 * The agents' `lookup`: resolves every address of `hostname` and keeps only those the target
 * policy allows; none left is an `EBLOCKED` error naming the first refused address.
 */
export function guardedLookup(hostname: string, options: unknown, callback?: LookupCallback): void {
  const cb = (typeof options === 'function' ? options : callback) as LookupCallback;
  const opts = (typeof options === 'object' && options !== null ? options : {}) as { all?: boolean; family?: number; hints?: number };
  dnsLookup(hostname, { family: opts.family ?? 0, hints: opts.hints ?? 0, all: true }, (err, addresses) => {
    if (err) return cb(err, '');
    const allowed = addresses.filter((a) => blockedAddressReason(a.address) === null);
    if (allowed.length === 0) {
      const first = addresses[0];
      const why = first ? `${first.address} is ${blockedAddressReason(first.address)}` : 'no address';
      return cb(new BlockedTargetError(`blocked: ${hostname} resolves to ${why}`), '');
    }
    if (opts.all) cb(null, allowed);
    else cb(null, allowed[0]!.address, allowed[0]!.family);
  });
}
