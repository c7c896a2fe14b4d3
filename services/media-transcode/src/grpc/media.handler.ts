/**
 * The media api's gRPC methods (transport only): protobuf in, a call to the upload flow or to the
 * domain's Reviewables, protobuf out. The upload flow itself lives in upload/upload.flow.ts.
 */
import { AppError, streamGc, type ServiceHandlers } from '@reelbase/lib-platform';
import type { mediav1 } from '@reelbase/proto';
import type { Reviewables } from '../domain/reviewables.js';
import type { UploadFlow } from '../upload/upload.flow.js';

export const MEDIA_SERVICE_NAME = 'reelbase.media.v1.MediaService';

/** Everything the handlers call, given at once. */
export interface MediaHandlerDeps {
  uploads: UploadFlow;
  reviewables: Reviewables;
  /** Largest data message of a media read. */
  readChunkBytes: number;
}

export function mediaHandlers(deps: MediaHandlerDeps): ServiceHandlers<mediav1.MediaServiceServer> {
  return {
    uploadReviewable: (requests, ctx, signal) => deps.uploads.upload(requests, ctx, signal),

    getReviewable: (req, ctx) => deps.reviewables.status(req.versionId, ctx),

    async finishedOutputs(req) {
      const outputs = await deps.reviewables.finishedOutputs(req.versionIds);
      return { outputs: outputs.map((o) => ({ versionId: o.versionId, reviewKind: o.reviewKind, proxyKey: o.proxyKey, thumbnailKey: o.thumbnailKey })) };
    },

    async readMedia(req, _ctx, out) {
      const { key, info, start, end, body } = await deps.reviewables.open(req.key, req.hasRange ? { start: req.rangeStart, end: req.rangeEnd } : undefined);
      await out.write({
        payload: { $case: 'info', value: { contentType: info.contentType, size: info.size, etag: info.etag, rangeStart: start, rangeEnd: Math.max(end, 0) } },
      });
      if (!body) return;
      const abort = () => body.destroy();
      out.signal.addEventListener('abort', abort, { once: true });
      try {
        let pending: Buffer = Buffer.alloc(0);
        for await (const piece of body as AsyncIterable<Buffer>) {
          streamGc.streamed(piece.length);
          pending = pending.length ? Buffer.concat([pending, piece]) : piece;
          while (pending.length >= deps.readChunkBytes) {
            await out.write({ payload: { $case: 'data', value: pending.subarray(0, deps.readChunkBytes) } });
            pending = pending.subarray(deps.readChunkBytes);
          }
        }
        if (pending.length) await out.write({ payload: { $case: 'data', value: pending } });
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw AppError.unavailable(`the object store stopped sending ${key}: ${(err as Error).message}`, err);
      } finally {
        out.signal.removeEventListener('abort', abort);
        body.destroy();
      }
    },
  };
}
