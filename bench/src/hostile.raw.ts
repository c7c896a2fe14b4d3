/**
 * Raw HTTP/1.1 over a TCP socket: the request shapes fetch refuses to send (duplicate
 * Content-Length, CL + TE, missing Host, control characters, huge headers).
 */
import { connect } from 'node:net';

/** The status line and head of one raw answer. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** Sends `request` verbatim and reads until the server closes or `timeoutMs` passes. */
export function rawRequest(port: number, request: string | Buffer, timeoutMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
      resolve({ status: m ? Number(m[1]) : 0, head, body });
    };
    const timer = setTimeout(done, timeoutMs);
    socket.on('connect', () => socket.write(request));
    socket.on('data', (c) => {
      chunks.push(c);
      // One answer is enough: stop once a complete head and its declared body arrived.
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = /content-length:\s*(\d+)/i.exec(text.slice(0, end));
      if (len && text.length - end - 4 >= Number(len[1])) {
        clearTimeout(timer);
        done();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      done();
    });
  });
}

/** Request-smuggling and framing shapes, each a complete raw request. */
export function smugglingShapes(token: string): Record<string, string> {
  const auth = `Authorization: Bearer ${token}\r\n`;
  const body = '{"data":{"code":"X"}}';
  return {
    duplicate_content_length: `POST /entities/Shot HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 3\r\n\r\n${body}`,
    cl_and_te: `POST /entities/Shot HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    missing_host: `GET /me HTTP/1.1\r\n${auth}\r\n`,
    control_char_header: `GET /me HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n${auth}\r\n`,
    huge_header: `GET /me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(80_000)}\r\n${auth}\r\n`,
    huge_query: `GET /events?${'a=1&'.repeat(30_000)} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
    bad_chunk: `POST /entities/Shot HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`,
    upgrade_elsewhere: `GET /me HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    ws_bad_version: `GET /events/ws?token=${token} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 99\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
    http09: `GET /me\r\n\r\n`,
    absolute_uri: `GET http://evil.example/me HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
    bad_method: `BREW /me HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
    trace: `TRACE /me HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
    non_ascii_token: `GET /me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u1e6b\u00f6k\u00ebn\r\n\r\n`,
  };
}
