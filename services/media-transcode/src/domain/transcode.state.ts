/**
 * Who owns a reviewable's transcode state (docs/media.md, "Who owns the transcode state"): the
 * job row (`media.jobs`: its state, outputs, files and error, with the attempts beside it). The
 * Representation's transcode fields (`transcode_status`, `attempts`, `transcode_error`,
 * `review_kind`, `review_media_key`, `thumbnail_media_key`, `files`) are a copy, written only here
 * and only after the job row: every write of a state first changes the job, then sends the copy.
 * A copy that could not be sent is sent again from the job row by the next delivery (`resend`);
 * each copy of a finished state that is sent is marked on the row (`markCopied`), so a row whose
 * copy is behind is published again by the sweeper even when its message was lost.
 */
import type { CallContext } from '@reelbase/lib-platform';
import type { Job, JobOutputs, JobStore, RepresentationFields, RepresentationWriter } from './ports.js';

/** The copy a new Representation is created with (its job is being reserved: `pending`). */
export function pendingCopy(): RepresentationFields {
  return { transcode_status: 'pending', attempts: 0 };
}

/** The copy of a `done` job: its outputs and files. */
export function doneCopy(outputs: JobOutputs, files: Record<string, unknown> | null): RepresentationFields {
  return {
    transcode_status: 'done',
    review_kind: outputs.reviewKind,
    review_media_key: outputs.proxyKey,
    thumbnail_media_key: outputs.thumbnailKey,
    transcode_error: null,
    ...(files ? { files } : {}),
  };
}

/** The copy of a `failed` job. */
export function failedCopy(reason: string, attempts: number): RepresentationFields {
  return { transcode_status: 'failed', transcode_error: reason, attempts };
}

export interface TranscodeStateDeps {
  jobs: JobStore;
  records: RepresentationWriter;
}

export class TranscodeState {
  constructor(private readonly deps: TranscodeStateDeps) {}

  /** Attempt `attempt` has started (the job is `processing` since its claim): the copy says so. */
  async processing(job: Job, attempt: number, ctx: CallContext): Promise<void> {
    await this.deps.records.updateRepresentation(job.representationId, { transcode_status: 'processing', attempts: attempt, transcode_error: null }, ctx);
  }

  /** The thumbnail is stored before the proxy: shown at once (progress within `processing`). */
  async thumbnailShown(job: Job, reviewKind: string, thumbnailKey: string, ctx: CallContext): Promise<void> {
    await this.deps.records.updateRepresentation(job.representationId, { thumbnail_media_key: thumbnailKey, review_kind: reviewKind }, ctx);
  }

  /** The job is `done` with its outputs and files (guests are served from the row from now on). */
  async jobDone(job: Job, outputs: JobOutputs, files: Record<string, unknown>): Promise<void> {
    await this.deps.jobs.finishDone(job.id, outputs, files);
  }

  /** The copy of a job `jobDone` just ended: the Representation becomes `done`, the Version gets its thumbnail. */
  async copyDone(job: Job, outputs: JobOutputs, files: Record<string, unknown>, ctx: CallContext): Promise<void> {
    await this.sendDone(job, outputs, files, ctx);
  }

  /** The job is `failed` with `reason` after `attempts` attempts, then the copy. */
  async failed(job: Job, reason: string, attempts: number, ctx: CallContext): Promise<void> {
    await this.deps.jobs.finish(job.id, 'failed', reason);
    await this.sendFailed(job, reason, attempts, ctx);
  }

  /** The Representation was deleted: the job is `failed`, with no copy left to send. */
  async representationGone(job: Job): Promise<void> {
    await this.deps.jobs.finish(job.id, 'failed');
    await this.deps.jobs.markCopied(job.id, 'failed');
  }

  /**
   * A finished job whose Representation still shows `copied` (the copy's send failed after the
   * job row was written): sends the copy again, from the job row. True when it sent one.
   */
  async resend(job: Job, copied: string | undefined, ctx: CallContext): Promise<boolean> {
    if (job.state === copied) {
      // The copy arrived but was not marked on the row: marked now, so the sweeper leaves the job.
      if (job.state === 'done' || job.state === 'failed') await this.deps.jobs.markCopied(job.id, job.state);
      return false;
    }
    if (job.state === 'done' && job.outputs) {
      await this.sendDone(job, job.outputs, job.files, ctx);
      return true;
    }
    if (job.state === 'failed' && job.error !== null) {
      const { count } = await this.deps.jobs.attempts(job.id);
      await this.sendFailed(job, job.error, count, ctx);
      return true;
    }
    return false;
  }

  private async sendDone(job: Job, outputs: JobOutputs, files: Record<string, unknown> | null, ctx: CallContext): Promise<void> {
    await this.deps.records.updateRepresentation(job.representationId, doneCopy(outputs, files), ctx);
    // The latest done reviewable of a Version gives it its thumbnail (thumbnail_id = the Representation's id).
    if (!(await this.deps.jobs.newerDoneExists(job))) await this.deps.records.setVersionThumbnail(job.versionId, job.representationId, ctx);
    await this.deps.jobs.markCopied(job.id, 'done');
  }

  private async sendFailed(job: Job, reason: string, attempts: number, ctx: CallContext): Promise<void> {
    await this.deps.records.updateRepresentation(job.representationId, failedCopy(reason, attempts), ctx);
    await this.deps.jobs.markCopied(job.id, 'failed');
  }
}
