/**
 * The gateway's client of media-transcode (docs/media.md), on lib-platform's createGrpcClient:
 * the unary status call, plus the two streams, which carry bytes through without holding them.
 * - `upload` sends the header, then the body's chunks in order, each written only once the call
 *   takes more (so the body is read only as fast as the service stores it); no total deadline,
 *   but the call is given up with `unavailable` when the service takes nothing, or does not
 *   answer after the last byte, for `idleMs`.
 * - `read` resolves once the object's info has arrived, then hands out the bytes as a stream that
 *   pulls the next message only when the HTTP client has taken the last one.
 * Every call is signed (internal.auth.ts) and carries the caller's context; failures come back as
 * the AppError the service threw.
 */
import { makeGenericClientConstructor } from '@grpc/grpc-js';
import { AppError, createGrpcClient, isAppError, streamGc, type CallContext, type Metrics } from '@reelbase/lib-platform';
import { mediav1 } from '@reelbase/proto';
import { Readable } from 'node:stream';

/** One object being read: what it is, and its bytes. */
export interface MediaRead {
  info: mediav1.MediaInfo;
  /** The bytes of [info.rangeStart, info.rangeEnd]; destroying it cancels the call. */
  body: Readable;
}

/** What the media routes call. Tests pass fakes of the same shape. */
export interface MediaPeer {
  getReviewable(request: mediav1.GetReviewableRequest, ctx: CallContext): Promise<mediav1.GetReviewableResponse>;
  /**
   * Streams `body` after `header`; resolves with the service's answer once it has stored the
   * original. A body that fails with an AppError (413 from a byte limit) fails the upload with it.
   */
  upload(header: mediav1.UploadHeader, body: Readable, ctx: CallContext): Promise<mediav1.UploadReviewableResponse>;
  read(request: mediav1.ReadMediaRequest, ctx: CallContext): Promise<MediaRead>;
  /** The proxy and thumbnail keys of the newest done job of each version (what a share link's guests see). */
  finishedOutputs(request: mediav1.FinishedOutputsRequest, ctx: CallContext): Promise<mediav1.FinishedOutputsResponse>;
}

export interface MediaClientOptions {
  address: string;
  internalAuthSecret: string;
  /** Deadline of the status call. */
  deadlineMs: number;
  /** Longest time a stream may make no progress while the gateway waits on it. */
  idleMs: number;
  metrics?: Metrics;
}

/** Bytes gathered into one upload message (well below the 4 MiB a gRPC server accepts by default). */
const UPLOAD_MESSAGE_BYTES = 256 * 1024;

/** Field 2 (`chunk`) of `UploadReviewableRequest`, wire type 2 (length-delimited). */
const CHUNK_TAG = 18;

/** An `UploadReviewableRequest` already in its wire form: the bytes gRPC sends. */
type EncodedUploadRequest = Buffer & { readonly encodedUpload: true };

/**
 * `pieces` (`size` bytes in all) as one encoded `chunk` message: the tag, the length, then the
 * bytes copied once into place. The generated encoder would copy every byte three times (the
 * pieces into one buffer, that into the encoder's output, that into a Buffer) before grpc-js
 * copies it once more into its frame; each copy is garbage the collector has to catch up with.
 */
export function encodeChunkMessage(pieces: Buffer[], size: number): EncodedUploadRequest {
  let lengthBytes = 1;
  for (let n = size; n >= 0x80; n = Math.floor(n / 0x80)) lengthBytes++;
  const out = Buffer.allocUnsafe(1 + lengthBytes + size);
  out[0] = CHUNK_TAG;
  let at = 1;
  for (let n = size; ; n = Math.floor(n / 0x80)) {
    if (n < 0x80) {
      out[at++] = n;
      break;
    }
    out[at++] = (n & 0x7f) | 0x80;
  }
  for (const piece of pieces) at += piece.copy(out, at);
  return out as EncodedUploadRequest;
}

/** The generated service, but an upload message may come already encoded (encodeChunkMessage). */
const MediaServiceClient = makeGenericClientConstructor(
  {
    ...mediav1.MediaServiceService,
    uploadReviewable: {
      ...mediav1.MediaServiceService.uploadReviewable,
      requestSerialize: (value: mediav1.UploadReviewableRequest | EncodedUploadRequest): Buffer =>
        Buffer.isBuffer(value) ? value : mediav1.MediaServiceService.uploadReviewable.requestSerialize(value),
    },
  },
  'reelbase.media.v1.MediaService',
) as unknown as typeof mediav1.MediaServiceClient;

export function createMediaClient(opts: MediaClientOptions): { peer: MediaPeer; close(): void } {
  const client = createGrpcClient(MediaServiceClient, mediav1.MediaServiceService, {
    name: 'media-transcode',
    address: opts.address,
    internalAuthSecret: opts.internalAuthSecret,
    deadlineMs: opts.deadlineMs,
    streamIdleMs: opts.idleMs,
    metrics: opts.metrics,
  });

  const upload: MediaPeer['upload'] = async (header, body, ctx) => {
    const call = client.clientStream('uploadReviewable', ctx);
    try {
      await call.write({ payload: { $case: 'header', value: header } });
      // Socket reads arrive in pieces of ~64 KiB; fewer, larger messages cost less on both sides.
      let pending: Buffer[] = [];
      let size = 0;
      const flush = async () => {
        if (size === 0) return;
        const message = encodeChunkMessage(pending, size);
        pending = [];
        size = 0;
        // Typed as the message it encodes; the client's serializer passes it through as is.
        await call.write(message as unknown as mediav1.UploadReviewableRequest);
        streamGc.streamed(message.length);
      };
      for await (const chunk of body) {
        pending.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= UPLOAD_MESSAGE_BYTES) await flush();
      }
      await flush();
      return await call.end();
    } catch (err) {
      call.cancel();
      if (isAppError(err)) throw err;
      throw new AppError('bad_request', 'the upload body ended before it was complete', { cause: err });
    }
  };

  const read: MediaPeer['read'] = async (request, ctx) => {
    const messages = client.serverStream('readMedia', request, ctx);
    const it = messages[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.payload?.$case !== 'info') {
      messages.cancel();
      throw new AppError('internal', 'media-transcode answered a read without the object info first');
    }
    async function* bytes(): AsyncGenerator<Buffer> {
      for (;;) {
        const next = await it.next();
        if (next.done) return;
        if (next.value.payload?.$case === 'data') {
          streamGc.streamed(next.value.payload.value.length);
          yield next.value.payload.value;
        }
      }
    }
    const body = Readable.from(bytes(), { objectMode: false });
    body.once('close', () => messages.cancel());
    return { info: first.value.payload.value, body };
  };

  const peer: MediaPeer = {
    getReviewable: (request, ctx) => client.call.getReviewable(request, ctx),
    finishedOutputs: (request, ctx) => client.call.finishedOutputs(request, ctx),
    upload,
    read,
  };
  return { peer, close: () => client.close() };
}
