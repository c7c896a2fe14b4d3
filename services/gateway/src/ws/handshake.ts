/**
 * The WebSocket handshake checks the `ws` library would make, made first by the gateway so a
 * refusal gets the error body, `x-request-id` and a log line like every other answer (ws's
 * own refusals are bare). Only a request passing these reaches ws.
 */
import type { IncomingMessage } from 'node:http';
import type { RawError } from '../http/raw.response.js';

const KEY = /^[+/0-9A-Za-z]{22}==$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A problem with the upgrade request, or undefined when ws will accept it. */
export function handshakeProblem(req: IncomingMessage): RawError | undefined {
  if (req.method !== 'GET') {
    return { status: 405, code: 'method_not_allowed', detail: 'a WebSocket handshake must be a GET', headers: { Allow: 'GET' } };
  }
  const upgrade = req.headers.upgrade;
  if (upgrade === undefined || upgrade.toLowerCase() !== 'websocket') {
    return { status: 400, code: 'bad_request', detail: 'the Upgrade header must be "websocket"' };
  }
  const key = req.headers['sec-websocket-key'];
  if (key === undefined || !KEY.test(key)) {
    return { status: 400, code: 'bad_request', detail: 'missing or invalid Sec-WebSocket-Key header' };
  }
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') {
    return {
      status: 400,
      code: 'bad_request',
      detail: 'missing or unsupported Sec-WebSocket-Version header (13 or 8)',
      headers: { 'Sec-WebSocket-Version': '13, 8' },
    };
  }
  const protocols = req.headers['sec-websocket-protocol'];
  if (protocols !== undefined) {
    const names = protocols.split(',').map((p) => p.replace(/^[ \t]+|[ \t]+$/g, ''));
    if (protocols.startsWith(' ') || protocols.startsWith('\t') || names.some((n) => !TOKEN.test(n)) || new Set(names).size !== names.length) {
      return { status: 400, code: 'bad_request', detail: 'invalid Sec-WebSocket-Protocol header' };
    }
  }
  return undefined;
}
