/**
 * A TCP proxy in front of the gateway that misbehaves on purpose, for client tests: it can cut
 * the connection of the first request matching a pattern just as the answer starts (the server
 * did the work, the client never hears of it), or answer the first requests itself with 429 and
 * a `Retry-After`, before passing everything else through unchanged.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface FaultProxy {
  url: string;
  /** Requests seen (request lines), in order. */
  requests: string[];
  /** Connections cut after the server answered. */
  cut: number;
  /** Requests answered with 429 by the proxy itself, and when. */
  limited: number[];
  close(): Promise<void>;
}

export interface FaultOptions {
  /** Cut the answer of the first request whose request line matches. */
  cutFirst?: RegExp;
  /** Answer this many requests matching `limitMatch` (default: any) with 429 first. */
  limitFirst?: number;
  limitMatch?: RegExp;
  retryAfterSeconds?: number;
}

export async function startFaultProxy(target: string, opts: FaultOptions): Promise<FaultProxy> {
  const upstream = new URL(target);
  const state: FaultProxy = { url: '', requests: [], cut: 0, limited: [], close: async () => undefined };
  let cutDone = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    let up: Socket | undefined;
    let cutThis = false;
    let buffered = Buffer.alloc(0);
    const onClientData = (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      const text = buffered.toString('latin1');
      const end = text.indexOf('\r\n');
      if (end < 0 && !up) return;
      if (!up) {
        const line = text.slice(0, end);
        state.requests.push(line);
        if (opts.limitFirst && state.limited.length < opts.limitFirst && (!opts.limitMatch || opts.limitMatch.test(line))) {
          state.limited.push(Date.now());
          const body = JSON.stringify({ detail: 'too many requests', code: 'rate_limited' });
          client.end(
            `HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: ${opts.retryAfterSeconds ?? 1}\r\n` +
              `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
          );
          return;
        }
        if (opts.cutFirst && !cutDone && opts.cutFirst.test(line)) {
          cutDone = true;
          cutThis = true;
        }
        up = connect(Number(upstream.port), upstream.hostname);
        sockets.add(up);
        up.on('close', () => {
          sockets.delete(up!);
          client.destroy();
        });
        up.on('error', () => client.destroy());
        up.on('data', (answer: Buffer) => {
          if (cutThis) {
            // The server has answered: the client never sees it.
            state.cut++;
            client.destroy();
            up!.destroy();
            return;
          }
          client.write(answer);
        });
        up.write(buffered);
        client.on('close', () => up?.destroy());
        return;
      }
      up.write(data);
    };
    client.on('data', onClientData);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  state.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return state;
}
