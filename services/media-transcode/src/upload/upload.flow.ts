/**
 * An upload (docs/media.md, "Upload"): the original is streamed to the object store with
 * back-pressure (the next message is read only when the store took the last one) while the Version
 * is checked (a Version that is not there stops the storing and removes what was stored); then the
 * Representation is created `pending` as the uploading principal, the job row written (the outbox)
 * and the job published on TRANSCODE. A failure before the Representation exists leaves nothing
 * behind; one after it marks the Representation `failed`, so no reviewable stays `pending` for
 * ever. A job whose publish fails is published by the sweeper.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import {
  AppError,
  isUuid,
  mediaExtension,
  newId,
  newMediaPrefix,
  streamGc,
  systemContext,
  uploadFileName,
  type CallContext,
  type Logger,
} from '@reelbase/lib-platform';
import type { mediav1, recordsv1 } from '@reelbase/proto';
import { storedContentType } from '../domain/reviewable.rules.js';
import { pendingCopy } from '../domain/transcode.state.js';
import type { JobStore, MediaObjects, TranscodeQueue, UploadRecords } from '../domain/ports.js';

export interface UploadFlowDeps {
  store: MediaObjects;
  /** Records as the protobuf `Record`s the upload answers with. */
  records: UploadRecords<recordsv1.Record>;
  jobs: JobStore;
  publisher: TranscodeQueue;
  logger: Logger;
  maxBytes: number;
  /** Longest wait for the store to take more bytes (or to finish) before the upload is `unavailable`. */
  storeStallMs: number;
  /** Called with each chunk's size (the upload-bytes metric). */
  onBytes?: (n: number) => void;
  /** Called once per upload with `stored` or the error kind (the uploads metric). */
  onOutcome?: (outcome: string) => void;
}

/** What the pass-through to the store holds beyond the part being filled: about one message. */
const BUFFER_BYTES = 64 * 1024;

export class UploadFlow {
  constructor(private readonly deps: UploadFlowDeps) {}

  async upload(requests: AsyncIterable<mediav1.UploadReviewableRequest>, ctx: CallContext, signal: AbortSignal): Promise<mediav1.UploadReviewableResponse> {
    try {
      const res = await this.run(requests, ctx, signal);
      this.deps.onOutcome?.('stored');
      return res;
    } catch (err) {
      this.deps.onOutcome?.(err instanceof AppError ? err.kind : 'internal');
      throw err;
    }
  }

  private async run(
    requests: AsyncIterable<mediav1.UploadReviewableRequest>,
    ctx: CallContext,
    signal: AbortSignal,
  ): Promise<mediav1.UploadReviewableResponse> {
    const { store, records, jobs, logger, maxBytes } = this.deps;
    const it = requests[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done || first.value.payload?.$case !== 'header') throw new AppError('bad_request', 'an upload starts with its header message');
    const header = first.value.payload.value;
    if (!isUuid(header.versionId)) throw AppError.notFound(`Version ${header.versionId} not found`);
    if (header.declaredSize > maxBytes) throw tooLarge(maxBytes);
    // The Version is checked while the body is already being stored (the gateway answered 404
    // before reading the body: docs/media.md, "Upload"), so this round trip adds nothing to the
    // upload; should the Version be gone by now, the storing stops and what it stored is removed.
    const versionCheck = records.getVersion(header.versionId, ctx);
    versionCheck.catch(() => {});

    const prefix = newMediaPrefix();
    const key = `${prefix}/original${mediaExtension(header.fileName)}`;
    const contentType = storedContentType(header.contentType);
    const refused = new AbortController();
    const storing = this.storeOriginal(it, key, contentType, signal, header.declaredSize, refused.signal);
    storing.catch(() => {});
    let version: Awaited<typeof versionCheck>;
    try {
      version = await versionCheck;
    } catch (err) {
      refused.abort(err);
      // Stopped at its next chunk (and cleaned up then), or already complete: then removed here.
      const stored = await storing.then(
        () => true,
        () => false,
      );
      if (stored) await store.remove([key]).catch((e: unknown) => logger.warn({ err: e, key }, 'could not remove the original of a refused upload'));
      throw err;
    }
    const size = await storing;

    const fileName = uploadFileName(header.fileName);
    // The job row first (a reservation): should this process stop before the job is queued, the
    // sweeper finds the Representation it created, or removes the original when it created none.
    const jobId = newId();
    try {
      await jobs.reserve({
        id: jobId,
        versionId: version.id,
        projectId: version.projectId ?? null,
        originalKey: key,
        originalSize: size,
        contentType,
        fileName,
      });
    } catch (err) {
      await store.remove([key]).catch((e: unknown) => logger.warn({ err: e, key }, 'could not remove the original of a failed upload'));
      throw err;
    }
    let representation;
    try {
      representation = await records.createRepresentation(
        version.projectId,
        {
          name: fileName,
          version: { type: 'Version', id: version.id },
          files: { original: { key, size, content_type: contentType, file_name: fileName } },
          ...pendingCopy(),
        },
        ctx,
      );
    } catch (err) {
      // Refused (or records is down): nothing was created. A timeout may hide a create that did
      // happen; the reservation is then kept for the sweeper, which looks for it.
      if (!(err instanceof AppError && err.kind === 'unavailable')) {
        await jobs.dropReservation(jobId).catch((e: unknown) => logger.warn({ err: e, job_id: jobId }, 'could not drop a reservation'));
        await store.remove([key]).catch((e: unknown) => logger.warn({ err: e, key }, 'could not remove the original of a refused upload'));
      }
      throw err;
    }

    try {
      await jobs.attach(jobId, representation.id);
    } catch (err) {
      // The reservation stays: the sweeper attaches it once the database answers again.
      logger.warn({ err, job_id: jobId, representation_id: representation.id }, 'upload stored; its job is queued by the sweeper');
      return { representation, status: 'pending' };
    }
    await this.deps.publisher.publishNow(jobId);
    return { representation, status: 'pending' };
  }

  private withinStall<T>(p: Promise<T>, what: string, ms = this.deps.storeStallMs): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(stallError(ms, what)), ms);
    });
    return Promise.race([p, stalled]).finally(() => clearTimeout(timer));
  }

  /**
   * Streams the chunks into the store; returns the byte count. Nothing is left behind on failure,
   * nor when `refused` aborts (the Version check failed): the next chunk ends it.
   */
  private async storeOriginal(
    it: AsyncIterator<mediav1.UploadReviewableRequest>,
    key: string,
    contentType: string,
    signal: AbortSignal,
    declaredSize: number,
    refused: AbortSignal,
  ): Promise<number> {
    const { store, maxBytes, onBytes } = this.deps;
    let bytes = 0;
    let body: PassThrough | undefined;
    let put: Promise<void> | undefined;
    /** Rejects when the store fails or ends the upload early: what a wait for `drain` races against. */
    let putEnded: Promise<never> | undefined;
    let putError: unknown;
    try {
      for (;;) {
        const next = await it.next();
        refused.throwIfAborted();
        if (next.done) break;
        if (next.value.payload?.$case !== 'chunk') throw new AppError('bad_request', 'an upload sends one header, then only chunks');
        const chunk = next.value.payload.value;
        if (chunk.length === 0) continue;
        bytes += chunk.length;
        if (bytes > maxBytes) throw tooLarge(maxBytes);
        onBytes?.(chunk.length);
        streamGc.streamed(chunk.length);
        if (!body) {
          // Started with the first byte, so an empty file is stored as one empty object.
          body = new PassThrough({ highWaterMark: BUFFER_BYTES });
          put = store.putStream(key, body, contentType, declaredSize);
          put.catch((err: unknown) => {
            putError = err;
            body?.destroy();
          });
          putEnded = put.then(() => Promise.reject(new Error('the store ended the upload early')));
          // Observed by the races below; never an unhandled rejection once the upload is over.
          putEnded.catch(() => {});
        }
        if (putError) throw putError;
        if (!body.write(chunk)) {
          const drained = once(body, 'drain', { signal });
          drained.catch(() => {});
          await this.withinStall(Promise.race([drained, putEnded!]), 'stopped taking data');
        }
      }
      refused.throwIfAborted();
      if (!body) {
        // An empty file is one empty object (a multipart upload needs at least one part).
        await store.putBuffer(key, Buffer.alloc(0), contentType);
        return 0;
      }
      body.end();
      // Completing a multipart upload makes the store assemble the whole object (S3 may take
      // minutes for a large one), so that wait grows with the size: the stall limit plus a second
      // per whole 16 MiB.
      await this.withinStall(put!, 'did not confirm the upload', this.deps.storeStallMs + Math.floor(bytes / (16 * 1024 * 1024)) * 1000);
      return bytes;
    } catch (err) {
      body?.destroy();
      put?.catch(() => {});
      await store.remove([key]).catch(() => {});
      if (putError) throw putError;
      if (signal.aborted && !(err instanceof AppError)) throw signal.reason;
      throw err;
    }
  }
}

/** A store that makes no progress for `ms` is down: the upload fails fast instead of hanging. */
function stallError(ms: number, what: string): AppError {
  return AppError.unavailable(`the object store ${what} for ${ms} ms`);
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('too_large', `a reviewable is at most ${maxBytes} bytes`, { extra: { max_bytes: maxBytes } });
}
