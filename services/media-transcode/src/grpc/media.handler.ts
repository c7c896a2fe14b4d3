/**
 * The media api's gRPC methods (transport only): the upload stream, the reviewable status and
 * media reads. The upload flow itself lives in upload/upload.flow.ts.
 */
import { AppError, assertMediaKey, isUuid, streamGc, type ServiceHandlers } from '@reelbase/lib-platform';
import type { mediav1 } from '@reelbase/proto';
import type { ObjectStore } from '../objects/object.store.js';
import type { MediaRecords } from '../records/records.client.js';
import type { FinishedJob, JobOutputs, JobRepository } from '../store/job.repository.js';
import type { UploadFlow } from '../upload/upload.flow.js';

export const MEDIA_SERVICE_NAME = 'reelbase.media.v1.MediaService';

export interface MediaHandlerDeps {
  uploads: UploadFlow;
  jobs: JobRepository;
  records: MediaRecords;
  store: ObjectStore;
  readChunkBytes: number;
}

/** Most versions one FinishedOutputs call may ask about (a playlist larger than this is cut). */
export const MAX_OUTPUT_VERSIONS = 1000;

/**
 * The outputs of a job finished before jobs kept them: they sit beside its original
 * (`<prefix>/thumb.jpg`, `<prefix>/proxy.mp4` or `proxy.jpg`); found once, then kept on the row.
 */
async function legacyOutputs(job: FinishedJob, deps: MediaHandlerDeps): Promise<JobOutputs | null> {
  const prefix = job.originalKey.slice(0, job.originalKey.lastIndexOf('/'));
  const exists = (key: string) =>
    deps.store.stat(key).then(
      () => true,
      (err: unknown) => {
        if (err instanceof AppError && err.kind === 'not_found') return false;
        throw err;
      },
    );
  const thumbnailKey = `${prefix}/thumb.jpg`;
  if (!(await exists(thumbnailKey))) return null;
  let outputs: JobOutputs;
  if (await exists(`${prefix}/proxy.mp4`)) outputs = { reviewKind: 'video', proxyKey: `${prefix}/proxy.mp4`, thumbnailKey };
  else if (await exists(`${prefix}/proxy.jpg`)) outputs = { reviewKind: 'image', proxyKey: `${prefix}/proxy.jpg`, thumbnailKey };
  else return null;
  await deps.jobs.recordOutputs(job.id, outputs);
  return outputs;
}

export function mediaHandlers(deps: MediaHandlerDeps): ServiceHandlers<mediav1.MediaServiceServer> {
  return {
    uploadReviewable: (requests, ctx, signal) => deps.uploads.upload(requests, ctx, signal),

    async getReviewable(req, ctx) {
      if (!isUuid(req.versionId)) throw AppError.notFound(`Version ${req.versionId} has no reviewable`);
      const job = await deps.jobs.latestForVersion(req.versionId);
      if (!job) throw AppError.notFound(`Version ${req.versionId} has no reviewable`);
      const { data } = await deps.records.getRepresentation(job.representationId, ctx);
      return {
        status: data.transcode_status ?? 'pending',
        reviewKind: data.review_kind ?? undefined,
        reviewMediaKey: data.review_media_key ?? undefined,
        thumbnailMediaKey: data.thumbnail_media_key ?? undefined,
        representationId: job.representationId,
        attempts: data.attempts ?? 0,
        transcodeError: data.transcode_error ?? undefined,
      };
    },

    async finishedOutputs(req) {
      const ids = [...new Set(req.versionIds.filter(isUuid).map((id) => id.toLowerCase()))].slice(0, MAX_OUTPUT_VERSIONS);
      const finished = await deps.jobs.newestDone(ids);
      const outputs = await Promise.all(
        finished.map(async (job) => {
          const o = job.outputs ?? (await legacyOutputs(job, deps));
          return o ? { versionId: job.versionId, reviewKind: o.reviewKind, proxyKey: o.proxyKey, thumbnailKey: o.thumbnailKey } : undefined;
        }),
      );
      return { outputs: outputs.filter((o) => o !== undefined) };
    },

    async readMedia(req, _ctx, out) {
      // Checked again here, whatever the gateway did: nothing outside rv/<hex>/<name> is ever read.
      const key = assertMediaKey(req.key);
      const info = await deps.store.stat(key);
      let start = 0;
      let end = info.size - 1;
      if (req.hasRange) {
        start = req.rangeStart;
        end = Math.min(req.rangeEnd, info.size - 1);
        if (start < 0 || start >= info.size || end < start) {
          throw new AppError('bad_request', `range ${req.rangeStart}-${req.rangeEnd} is outside the ${info.size} bytes of the object`, {
            code: 'range_not_satisfiable',
            extra: { size: info.size },
          });
        }
      }
      await out.write({
        payload: { $case: 'info', value: { contentType: info.contentType, size: info.size, etag: info.etag, rangeStart: start, rangeEnd: Math.max(end, 0) } },
      });
      if (info.size === 0) return;
      const body = await deps.store.readRange(key, start, end - start + 1);
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
