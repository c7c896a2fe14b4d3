/**
 * A WebSocket client of `/events/ws` for tests: the parsed messages, and promises of the open and
 * the close (code and reason).
 */
import { WebSocket } from 'ws';

export interface WsClient {
  ws: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  opened: Promise<void>;
}

/** Opens `/events/ws<query>` on the gateway at `baseUrl` (http://…). */
export function wsClient(baseUrl: string, query: string): WsClient {
  const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/events/ws${query}`);
  const messages: any[] = [];
  ws.on('message', (m) => messages.push(JSON.parse(String(m))));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, messages, closed, opened };
}

/** Resolves once `cond()` holds; throws after `ms`. */
export async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
