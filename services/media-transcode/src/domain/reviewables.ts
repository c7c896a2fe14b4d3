/**
 * What the media api answers about reviewables: a Version's transcode status, the outputs of its
 * newest `done` job (what guests are served), and media objects read by key (docs/media.md).
 * Reaches the jobs table, the object store and records through the ports (domain/ports.ts).
 */
import type { Readable } from 'node:stream';
import { AppError, assertMediaKey, isUuid, type CallContext } from '@reelbase/lib-platform';
import type { FinishedJob, JobOutputs, JobStore, MediaObjects, ObjectInfo, RepresentationReader } from './ports.js';

/** Most versions one FinishedOutputs call may ask about (a playlist larger than this is cut). */
export const MAX_OUTPUT_VERSIONS = 1000;

/** The transcode status of a Version's latest upload, as its Representation shows it. */
export interface ReviewableStatus {
  status: string;
  reviewKind?: string;
  reviewMediaKey?: string;
  thumbnailMediaKey?: string;
  representationId: string;
  attempts: number;
  transcodeError?: string;
}

/** The outputs of one Version's newest `done` job. */
export interface VersionOutputs extends JobOutputs {
  versionId: string;
}

/** A media object opened for reading: its facts, the byte range sent and the bytes. */
export interface OpenedMedia {
  key: string;
  info: ObjectInfo;
  start: number;
  end: number;
  /** Absent for an empty object. */
  body?: Readable;
}

export interface ReviewablesDeps {
  jobs: JobStore;
  objects: MediaObjects;
  records: RepresentationReader;
}

export class Reviewables {
  constructor(private readonly deps: ReviewablesDeps) {}

  /** The latest upload of a Version and its Representation's transcode fields; not_found without one. */
  async status(versionId: string, ctx: CallContext): Promise<ReviewableStatus> {
    if (!isUuid(versionId)) throw AppError.notFound(`Version ${versionId} has no reviewable`);
    const job = await this.deps.jobs.latestForVersion(versionId);
    if (!job) throw AppError.notFound(`Version ${versionId} has no reviewable`);
    const { data } = await this.deps.records.getRepresentation(job.representationId, ctx);
    return {
      status: data.transcode_status ?? 'pending',
      reviewKind: data.review_kind ?? undefined,
      reviewMediaKey: data.review_media_key ?? undefined,
      thumbnailMediaKey: data.thumbnail_media_key ?? undefined,
      representationId: job.representationId,
      attempts: data.attempts ?? 0,
      transcodeError: data.transcode_error ?? undefined,
    };
  }

  /** Per Version among `versionIds` (malformed ids ignored, at most MAX_OUTPUT_VERSIONS), the outputs of its newest `done` job. */
  async finishedOutputs(versionIds: readonly string[]): Promise<VersionOutputs[]> {
    const ids = [...new Set(versionIds.filter(isUuid).map((id) => id.toLowerCase()))].slice(0, MAX_OUTPUT_VERSIONS);
    const finished = await this.deps.jobs.newestDone(ids);
    const outputs = await Promise.all(
      finished.map(async (job) => {
        const o = job.outputs ?? (await this.legacyOutputs(job));
        return o ? { versionId: job.versionId, ...o } : undefined;
      }),
    );
    return outputs.filter((o) => o !== undefined);
  }

  /**
   * Opens `key` (checked again, whatever the gateway did: nothing outside rv/<hex>/<name> is ever
   * read) from `range.start` to `range.end` (clipped to the object), or whole.
   */
  async open(rawKey: string, range?: { start: number; end: number }): Promise<OpenedMedia> {
    const key = assertMediaKey(rawKey);
    const info = await this.deps.objects.stat(key);
    let start = 0;
    let end = info.size - 1;
    if (range) {
      start = range.start;
      end = Math.min(range.end, info.size - 1);
      if (start < 0 || start >= info.size || end < start) {
        throw new AppError('bad_request', `range ${range.start}-${range.end} is outside the ${info.size} bytes of the object`, {
          code: 'range_not_satisfiable',
          extra: { size: info.size },
        });
      }
    }
    if (info.size === 0) return { key, info, start, end };
    const body = await this.deps.objects.readRange(key, start, end - start + 1);
    return { key, info, start, end, body };
  }

  /**
   * The outputs of a job finished before jobs kept them: they sit beside its original
   * (`<prefix>/thumb.jpg`, `<prefix>/proxy.mp4` or `proxy.jpg`); found once, then kept on the row.
   */
  private async legacyOutputs(job: FinishedJob): Promise<JobOutputs | null> {
    const prefix = job.originalKey.slice(0, job.originalKey.lastIndexOf('/'));
    const exists = (key: string) =>
      this.deps.objects.stat(key).then(
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
    await this.deps.jobs.recordOutputs(job.id, outputs);
    return outputs;
  }
}
