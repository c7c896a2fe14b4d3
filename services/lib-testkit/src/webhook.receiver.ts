/**
 * A local webhook target for the notifier's tests and benchmark: a real HTTP server on
 * 127.0.0.1 that records every request and de-duplicates by `X-Event-Id`, the way a
 * receiver following docs/api-notes.md ("Webhooks") does. Each path is its own target
 * (`/hooks/<name>`), and each can be made to answer, fail, hang, or the whole server can go
 * down (connections refused) and come back on the same port.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How a target answers: `ok` 200, `slow` 200 after `ms`, `fail` 500 (or `status`), `hang` never answers. */
export type TargetMode = { kind: 'ok' } | { kind: 'slow'; ms: number } | { kind: 'fail'; status?: number } | { kind: 'hang' };

/** One request as it arrived. */
export interface ReceivedRequest {
  path: string;
  /** `X-Event-Id`, as a number (NaN when absent or not a number). */
  eventId: number;
  headers: IncomingMessage['headers'];
  /** The raw body (kept only with `keepBodies`, else empty). */
  body: string;
  /** `Date.now()` when the whole body had arrived. */
  at: number;
  /** What was answered: a status, or `hang`. */
  answered: number | 'hang';
  /** A held (`hang`) request: `Date.now()` when its connection closed (the sender gave up, or the target let go); unset while held. */
  closedAt?: number;
}

export interface WebhookReceiverOptions {
  /** Keep every raw body (tests); off for the benchmark's 100,000 requests. */
  keepBodies?: boolean;
  /** Called for every request once its body arrived (the raw body is given even without keepBodies). */
  onRequest?: (req: ReceivedRequest, rawBody: string) => void;
}

export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  port: number;
  /** `url + "/hooks/" + name`. */
  target(name: string): string;
  /** Sets how `/hooks/<name>` answers from now on (default `ok`). */
  setMode(name: string, mode: TargetMode): void;
  /** Every request to a target, in arrival order (all targets without a name). */
  requests(name?: string): ReceivedRequest[];
  /** Requests answered 2xx (or being answered 2xx by a `slow` target), in arrival order. */
  delivered(name: string): ReceivedRequest[];
  /** Event ids accepted (2xx) by a target, first arrival only: what a de-duplicating receiver keeps. */
  unique(name: string): number[];
  /** How many accepted requests repeated an event id the target had already accepted. */
  duplicates(name: string): number;
  /** Connections refused until up(); open connections are cut. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Resolves once `check()` is true (polled every 20 ms); rejects after `timeoutMs` with `what`. */
  waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

/** True when `header` is `sha256=<hex HMAC-SHA256 of body with secret>`. */
export function verifySignature(secret: string, rawBody: string, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('hex'));
  const given = Buffer.from(header.slice('sha256='.length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const PREFIX = '/hooks/';

export async function startWebhookReceiver(opts: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const modes = new Map<string, TargetMode>();
  const all: ReceivedRequest[] = [];
  const byTarget = new Map<string, ReceivedRequest[]>();
  const accepted = new Map<string, { seen: Set<number>; order: number[]; dups: number }>();
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0]!;
      const name = path.startsWith(PREFIX) ? path.slice(PREFIX.length) : path;
      const mode = modes.get(name) ?? { kind: 'ok' };
      const header = req.headers['x-event-id'];
      const eventId = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : NaN;
      const answered = mode.kind === 'ok' || mode.kind === 'slow' ? 200 : mode.kind === 'fail' ? (mode.status ?? 500) : 'hang';
      const entry: ReceivedRequest = { path: name, eventId, headers: req.headers, body: opts.keepBodies ? raw : '', at: Date.now(), answered };
      all.push(entry);
      let list = byTarget.get(name);
      if (!list) byTarget.set(name, (list = []));
      list.push(entry);
      if (answered === 200) {
        let a = accepted.get(name);
        if (!a) accepted.set(name, (a = { seen: new Set(), order: [], dups: 0 }));
        if (a.seen.has(eventId)) a.dups++;
        else {
          a.seen.add(eventId);
          a.order.push(eventId);
        }
      }
      opts.onRequest?.(entry, raw);
      if (answered === 'hang') {
        hanging.add(res);
        res.on('close', () => {
          hanging.delete(res);
          entry.closedAt = Date.now();
        });
        return;
      }
      const answer = () => {
        res.statusCode = answered;
        res.setHeader('content-type', 'text/plain');
        res.end(answered === 200 ? 'ok' : `failing on purpose (${answered})`);
      };
      if (mode.kind === 'slow') setTimeout(answer, mode.ms);
      else answer();
    });
  };

  const server: Server = createServer(handle);
  server.keepAliveTimeout = 5000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const r of hanging) r.destroy();
      for (const s of sockets) s.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });

  const port = await listen(0);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    target: (name) => `${url}${PREFIX}${name}`,
    setMode: (name, mode) => {
      modes.set(name, mode);
      // A target that stops hanging lets go of the requests it held (the sender has timed out).
      if (mode.kind !== 'hang') for (const r of hanging) r.destroy();
    },
    requests: (name) => (name === undefined ? [...all] : [...(byTarget.get(name) ?? [])]),
    delivered: (name) => (byTarget.get(name) ?? []).filter((r) => r.answered === 200),
    unique: (name) => [...(accepted.get(name)?.order ?? [])],
    duplicates: (name) => accepted.get(name)?.dups ?? 0,
    down: stopListening,
    up: async () => {
      if (!server.listening) await listen(port);
    },
    async waitFor(check, timeoutMs, what) {
      const until = Date.now() + timeoutMs;
      while (!check()) {
        if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: stopListening,
  };
}
