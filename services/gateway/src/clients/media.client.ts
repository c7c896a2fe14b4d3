/**
 * The gateway's client of media-transcode (docs/media.md): the unary status call wrapped by
 * lib-platform like every peer, plus the two streams, which carry bytes through without
 * holding them:
 * - `upload` sends the header, then the body's chunks as they come, with back-pressure both
 *   ways (a chunk is written only when the stream takes more; the body is read only as fast as
 *   it is written) and no total deadline: the call is given up when it takes nothing for
 *   `idleMs`, or when its answer does not come within `idleMs` of the last byte.
 * - `read` resolves once the object's info has arrived (within the call deadline), then hands
 *   out the bytes as a stream that pauses the gRPC call when the HTTP client reads slowly.
 * Every call is signed (internal.auth.ts) and carries the caller's context; failures come back
 * as the AppError the service threw (`unavailable` when it is down or too slow).
 */
import { Metadata, status, type ClientReadableStream, type ServiceError } from '@grpc/grpc-js';
import {
  AppError,
  createGrpcClient,
  fromServiceError,
  InternalAuth,
  INTERNAL_AUTH_REFUSED,
  toMetadata,
  type CallContext,
  type Metrics,
} from '@reelbase/lib-platform';
import { mediav1 } from '@reelbase/proto';
import { Transform, type Readable } from 'node:stream';

/** One object being read: what it is, and its bytes. */
export interface MediaRead {
  info: mediav1.MediaInfo;
  /** The bytes of [info.rangeStart, info.rangeEnd]; destroying it cancels the call. */
  body: Readable;
}

/** What the media routes call. Tests pass fakes of the same shape. */
export interface MediaPeer {
  getReviewable(request: mediav1.GetReviewableRequest, ctx: CallContext): Promise<mediav1.GetReviewableResponse>;
  /** Streams `body` after `header`; resolves with the service's answer once it has stored the original. */
  upload(header: mediav1.UploadHeader, body: Readable, ctx: CallContext): Promise<mediav1.UploadReviewableResponse>;
  read(request: mediav1.ReadMediaRequest, ctx: CallContext): Promise<MediaRead>;
}

export interface MediaClientOptions {
  address: string;
  internalAuthSecret: string;
  /** Deadline of the status call and of a read's first message. */
  deadlineMs: number;
  /** Longest pause of an upload or a read stream. */
  idleMs: number;
  metrics?: Metrics;
}

const NAME = 'media-transcode';
const UPLOAD_PATH = mediav1.MediaServiceService.uploadReviewable.path;
const READ_PATH = mediav1.MediaServiceService.readMedia.path;

function errorOf(err: ServiceError): AppError {
  if (err.code === status.UNAUTHENTICATED && err.details?.startsWith(INTERNAL_AUTH_REFUSED)) {
    return AppError.unavailable(`${NAME} refused the call (${err.details}); is INTERNAL_AUTH_SECRET the same in every service?`, err);
  }
  return fromServiceError(err, NAME);
}

export function createMediaClient(opts: MediaClientOptions): { peer: MediaPeer; close(): void } {
  const client = createGrpcClient(mediav1.MediaServiceClient, mediav1.MediaServiceService, {
    name: NAME,
    address: opts.address,
    internalAuthSecret: opts.internalAuthSecret,
    deadlineMs: opts.deadlineMs,
    metrics: opts.metrics,
  });
  const raw = client.raw;
  const auth = new InternalAuth(opts.internalAuthSecret);
  const observe = (method: string, started: bigint, code: string) =>
    opts.metrics?.rpcClientDuration.observe({ method: `${NAME}/${method}`, code }, Number(process.hrtime.bigint() - started) / 1e9);
  const signed = (ctx: CallContext, path: string): Metadata => {
    const md = toMetadata(ctx);
    auth.sign(md, path);
    return md;
  };

  const upload: MediaPeer['upload'] = (header, body, ctx) => {
    const started = process.hrtime.bigint();
    let idleFired = false;
    let settled = false;
    let sent = 0;
    const toMessages = new Transform({
      readableObjectMode: true,
      transform(chunk: Buffer, _enc, cb) {
        sent++;
        cb(null, { payload: { $case: 'chunk', value: chunk } });
      },
    });
    return new Promise<mediav1.UploadReviewableResponse>((resolve, reject) => {
      const finish = (err: AppError | undefined, res?: mediav1.UploadReviewableResponse) => {
        if (settled) return;
        settled = true;
        clearInterval(watch);
        observe('UploadReviewable', started, err ? err.kind : 'OK');
        if (err) {
          call.cancel();
          body.unpipe(toMessages);
          reject(err);
        } else resolve(res!);
      };
      const call = raw.uploadReviewable(signed(ctx, UPLOAD_PATH), {}, (err, res) => {
        if (idleFired) return finish(AppError.unavailable(`${NAME} took nothing for ${opts.idleMs} ms during an upload`));
        if (err) return finish(errorOf(err));
        finish(undefined, res);
      });
      // Only the service's own stalls count here (a chunk it does not take, or an answer that
      // does not come after the last byte); a slow client is the body guard's (body.deadline.ts).
      let seen = -1;
      let since = Date.now();
      const watch = setInterval(
        () => {
          const waiting = call.writableNeedDrain || toMessages.writableEnded;
          if (!waiting || sent !== seen) {
            seen = sent;
            since = Date.now();
          } else if (Date.now() - since >= opts.idleMs) {
            idleFired = true;
            call.cancel();
          }
        },
        Math.max(50, Math.min(1000, Math.floor(opts.idleMs / 4))),
      );
      watch.unref();
      call.write({ payload: { $case: 'header', value: header } });
      // Plain pipes: a failed call must not destroy the request (its error is still to be answered).
      body.pipe(toMessages).pipe(call as unknown as NodeJS.WritableStream);
      const broke = (err?: unknown) => {
        if (!body.readableEnded) finish(new AppError('bad_request', 'the upload body ended before it was complete', { cause: err }));
      };
      body.once('error', broke);
      body.once('close', () => broke());
    });
  };

  const read: MediaPeer['read'] = (request, ctx) => {
    const started = process.hrtime.bigint();
    return new Promise<MediaRead>((resolve, reject) => {
      let first = true;
      let idleFired = false;
      const call: ClientReadableStream<mediav1.ReadMediaResponse> = raw.readMedia(request, signed(ctx, READ_PATH), {});
      const firstTimer = setTimeout(() => {
        idleFired = true;
        call.cancel();
      }, opts.deadlineMs);
      // Time while the HTTP client is the slow side (its bytes are queued) does not count.
      let since = Date.now();
      const watch = setInterval(
        () => {
          const clientSlow = bytes.writableNeedDrain || bytes.readableLength >= bytes.readableHighWaterMark;
          if (first || clientSlow) since = Date.now();
          else if (Date.now() - since >= opts.idleMs) {
            idleFired = true;
            call.cancel();
          }
        },
        Math.max(50, Math.min(1000, Math.floor(opts.idleMs / 4))),
      );
      watch.unref();
      const idle = { touch: () => (since = Date.now()), stop: () => clearInterval(watch) };
      const fail = (err: ServiceError) => {
        clearTimeout(firstTimer);
        idle.stop();
        const app = idleFired ? AppError.unavailable(`${NAME} sent nothing in time while reading media`, err) : errorOf(err);
        observe('ReadMedia', started, app.kind);
        if (first) {
          first = false;
          reject(app);
        } else bytes.destroy(app);
      };
      const bytes = new Transform({
        writableObjectMode: true,
        transform(msg: mediav1.ReadMediaResponse, _enc, cb) {
          idle.touch();
          if (msg.payload?.$case === 'data') return cb(null, msg.payload.value);
          cb();
        },
      });
      // The first message is the info; the rest flows through `bytes`.
      call.once('data', (msg: mediav1.ReadMediaResponse) => {
        clearTimeout(firstTimer);
        idle.touch();
        if (msg.payload?.$case !== 'info') {
          call.cancel();
          first = false;
          observe('ReadMedia', started, 'internal');
          return reject(new AppError('internal', `${NAME} answered a read without its info first`));
        }
        first = false;
        call.pipe(bytes);
        resolve({ info: msg.payload.value, body: bytes });
      });
      call.on('error', (err: ServiceError) => {
        if (err.code === status.CANCELLED && !first && !idleFired) return; // we cancelled after the client left
        fail(err);
      });
      call.on('end', () => {
        idle.stop();
        if (!first) observe('ReadMedia', started, 'OK');
      });
      bytes.on('close', () => {
        idle.stop();
        if (!call.destroyed) call.cancel();
      });
    });
  };

  const peer: MediaPeer = {
    getReviewable: (request, ctx) => client.call.getReviewable(request, ctx),
    upload,
    read,
  };
  return { peer, close: () => client.close() };
}
