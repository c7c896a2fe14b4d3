/**
 * A WebSocket client for /events/ws that records every message and the close code.
 */
import WebSocket from 'ws';

export interface EventSocket {
  ws: WebSocket;
  /** Parsed messages in arrival order. */
  messages: any[];
  /** Resolves once the handshake completed (rejects if it failed). */
  opened: Promise<void>;
  /** Resolves with the close code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once at least `n` messages arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<any[]>;
  close(): Promise<void>;
}

export function openEventSocket(baseUrl: string, token: string, since?: number): EventSocket {
  const url = new URL('/events/ws', baseUrl.replace(/^http/, 'ws'));
  url.searchParams.set('token', token);
  if (since !== undefined) url.searchParams.set('since', String(since));
  const ws = new WebSocket(url);
  const messages: any[] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const w of waiters.splice(0)) w();
  });
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake refused with HTTP ${res.statusCode}`)));
  });
  opened.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  return {
    ws,
    messages,
    opened,
    closed,
    async waitFor(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${n} WebSocket messages within ${timeoutMs} ms, got ${messages.length}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
      return messages;
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return;
      ws.close(1000);
      await closed;
    },
  };
}
