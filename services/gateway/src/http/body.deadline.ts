/**
 * How long a request body may take. node's own `requestTimeout` counts the whole request,
 * which no upload of several GiB could meet, and it cannot be lifted for one route; so the
 * server runs without it (headers keep node's `headersTimeout`) and this guard, run for
 * every request before express, applies one of two rules:
 * - an ordinary body must have arrived `totalMs` (REQUEST_TIMEOUT_MS) after its headers;
 * - a streamed upload (`isUpload`) may take as long as it needs, but no more than `idleMs`
 *   (MEDIA_UPLOAD_IDLE_MS) may pass without a byte, or a body trickled at a few bytes a
 *   minute could hold its socket and its gRPC stream for hours.
 * A body that runs out of time is answered 408 `request_timeout` (when nothing was answered
 * yet) and the connection closed, in the shape of node's own refusals (raw.response.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeRawError } from './raw.response.js';
import { requestIdFrom } from './request.context.js';

export interface BodyDeadlineOptions {
  totalMs: number;
  idleMs: number;
  /** True for requests whose body is streamed through (the reviewable upload). */
  isUpload: (req: IncomingMessage) => boolean;
  /** Called once per request refused for time (logging, metrics), with the request id answered. */
  onTimeout?: (req: IncomingMessage, res: ServerResponse, kind: 'total' | 'idle', requestId: string, status: number) => void;
}

const TIMEOUT = { status: 408, code: 'request_timeout', detail: 'the request was not received in time' };

/** Arms the deadline of one request's body; a request without a body (or already read) is left alone. */
export function guardBody(req: IncomingMessage, res: ServerResponse, opts: BodyDeadlineOptions): void {
  if (req.complete) return;
  const upload = opts.isUpload(req);
  let timer: NodeJS.Timeout | undefined;
  const done = () => {
    clearTimeout(timer);
    clearInterval(timer);
    timer = undefined;
  };
  const fire = () => {
    done();
    if (req.complete) return;
    const socket = req.socket;
    const header = res.getHeader('x-request-id');
    const id = typeof header === 'string' ? header : requestIdFrom(req.headers['x-request-id']);
    const answered = !res.headersSent && socket.writable;
    opts.onTimeout?.(req, res, upload ? 'idle' : 'total', id, answered ? TIMEOUT.status : 0);
    if (answered) writeRawError(socket, TIMEOUT, id);
    else socket.destroy();
    // A handler reading the stream sees it end as aborted.
    req.destroy();
  };
  if (!upload) {
    timer = setTimeout(fire, opts.totalMs);
  } else {
    // Progress is the socket's byte count, watched without reading (a data listener would
    // switch the stream to flowing and defeat back-pressure). Time while the gateway itself
    // holds the body paused (the store is slower than the client) is never the client's.
    let bytes = req.socket.bytesRead;
    let lastProgress = Date.now();
    timer = setInterval(
      () => {
        const now = Date.now();
        const read = req.socket.bytesRead;
        if (read !== bytes || req.readableFlowing === false) {
          bytes = read;
          lastProgress = now;
        } else if (now - lastProgress >= opts.idleMs) {
          fire();
        }
      },
      Math.max(50, Math.min(1000, Math.floor(opts.idleMs / 4))),
    );
  }
  timer.unref();
  req.once('end', done);
  req.once('close', done);
}
