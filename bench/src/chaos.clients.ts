/**
 * What `npm run chaos` talks to the stack through (chaos.ts): a gateway client whose every request
 * ends — answered, refused, or given up after {@link DEADLINE_MS} — the event log read page by page,
 * and a WebSocket follower that reconnects with `since=` whatever closed it.
 */
import WebSocket from 'ws';

/** A request not answered within this is counted as hung. */
export const DEADLINE_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How one request ended. */
export type Outcome = { kind: 'ok'; status: number; body: any } | { kind: 'status'; status: number } | { kind: 'refused' } | { kind: 'hung' };

export class Gateway {
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  /** A request with the deadline; a connection refused or cut is `refused`, no answer in time `hung`. */
  async call(method: string, path: string, body?: unknown, raw?: { data: Buffer; type: string; name: string }): Promise<Outcome> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    let payload: string | Uint8Array | undefined;
    if (raw) {
      headers['content-type'] = raw.type;
      headers['x-file-name'] = raw.name;
      payload = new Uint8Array(raw.data);
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    try {
      const res = await fetch(new URL(path, this.url), { method, headers, body: payload, signal: AbortSignal.timeout(DEADLINE_MS) });
      const text = await res.text();
      if (res.status >= 200 && res.status < 300) return { kind: 'ok', status: res.status, body: text ? JSON.parse(text) : null };
      return { kind: 'status', status: res.status };
    } catch (err) {
      const e = err as Error;
      if (e.name === 'TimeoutError' || e.name === 'AbortError') return { kind: 'hung' };
      return { kind: 'refused' };
    }
  }

  /** Retries until the answer is 2xx (for the checks after a phase, not counted). */
  async must(method: string, path: string, body?: unknown): Promise<any> {
    const until = Date.now() + 60_000;
    for (;;) {
      const r = await this.call(method, path, body);
      if (r.kind === 'ok') return r.body;
      if (r.kind === 'status' && r.status === 404) return null;
      if (Date.now() > until) throw new Error(`${method} ${path}: ${r.kind} ${'status' in r ? r.status : ''}`);
      await sleep(250);
    }
  }
}

/** Every event after `after`, oldest first. */
export async function eventsAfter(gw: Gateway, after: number): Promise<any[]> {
  const out: any[] = [];
  let cursor = after;
  for (;;) {
    const body = await gw.must('GET', `/events?after=${cursor}&limit=1000`);
    const page = body.items as any[];
    out.push(...page);
    if (page.length < 1000 && !body.next_cursor) return out;
    cursor = page[page.length - 1].id;
  }
}

export async function lastEventId(gw: Gateway): Promise<number> {
  const body = await gw.must('GET', '/events?limit=1');
  return (body.items[0]?.id as number | undefined) ?? 0;
}

/** A WebSocket follower: reconnects with `since=` the last id it saw, whatever closed it. */
export class Follower {
  readonly ids: number[] = [];
  reconnects = 0;
  private ws?: WebSocket;
  private stopped = false;
  private last = 0;

  constructor(
    private readonly url: string,
    private readonly token: string,
    since: number,
  ) {
    this.last = since;
    this.open();
  }

  private open(): void {
    if (this.stopped) return;
    const u = new URL('/events/ws', this.url.replace(/^http/, 'ws'));
    u.searchParams.set('token', this.token);
    u.searchParams.set('since', String(this.last));
    const ws = new WebSocket(u);
    this.ws = ws;
    ws.on('message', (raw) => {
      try {
        const ev = JSON.parse(raw.toString()) as { id?: unknown };
        if (typeof ev.id === 'number') {
          this.ids.push(ev.id);
          this.last = Math.max(this.last, ev.id);
        }
      } catch {
        // not an event
      }
    });
    ws.on('error', () => undefined);
    ws.once('close', () => {
      if (this.stopped) return;
      this.reconnects++;
      setTimeout(() => this.open(), 250);
    });
  }

  lastId(): number {
    return this.last;
  }

  close(): void {
    this.stopped = true;
    this.ws?.terminate();
  }
}
