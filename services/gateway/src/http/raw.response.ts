/**
 * Answers written straight onto a socket, for what never reaches express: node's parser
 * refusals ('clientError': oversized headers 431, malformed requests 400, request timeouts
 * 408) and refused WebSocket upgrades. They carry what every answer carries: `x-request-id`
 * and the `{"detail","code"}` error body, and the connection is closed after them.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

export interface RawError {
  status: number;
  code: string;
  detail: string;
  headers?: Record<string, string>;
}

/** Header values are ours, but never let one break the response framing. */
const clean = (v: string) => v.replace(/[\r\n]/g, ' ');

/** The full HTTP/1.1 response text of `err`. */
export function rawErrorResponse(err: RawError, requestId: string): string {
  const body = JSON.stringify({ detail: err.detail, code: err.code });
  const lines = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${clean(requestId)}`,
    'Connection: close',
  ];
  for (const [name, value] of Object.entries(err.headers ?? {})) lines.push(`${clean(name)}: ${clean(value)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** Writes `err` on `socket` and closes it once written (destroyed if the peer does not read). */
export function writeRawError(socket: Duplex, err: RawError, requestId: string): void {
  if (socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawErrorResponse(err, requestId));
  // A peer that never reads must not keep the socket.
  const t = setTimeout(() => socket.destroy(), 5000);
  t.unref();
  socket.once('close', () => clearTimeout(t));
}

/** What node's HTTP parser error `code` means for the client. */
export function clientErrorOf(code: string | undefined): RawError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'headers_too_large', detail: 'the request line and headers are too large' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', detail: 'chunk extensions are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, code: 'request_timeout', detail: 'the request was not received in time' };
    default:
      return { status: 400, code: 'bad_request', detail: 'malformed HTTP request' };
  }
}
