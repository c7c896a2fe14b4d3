/**
 * What media-transcode's rules and flows need from outside (docs/architecture.md, "Service
 * template"): the jobs table (store/job.repository.ts), the owner of a reviewable's transcode
 * state (docs/media.md, "Who owns the transcode state"); the object store (objects/object.store.ts);
 * the Version and Representation records (records/records.client.ts); the TRANSCODE work queue
 * (upload/job.publisher.ts); ffmpeg and ffprobe (transcode/ffmpeg.runner.ts). The flows (upload/, worker/) depend on these, never on the adapters;
 * service.ts and worker.service.ts wire the adapters in.
 */
import type { Readable } from 'node:stream';
import type { CallContext, mediaPolicy } from '@reelbase/lib-platform';
import type { ProbeJson } from './probe.rules.js';

/** What an upload reserves: the job before its Representation exists. */
export interface NewJob {
  id: string;
  versionId: string;
  projectId: string | null;
  originalKey: string;
  originalSize: number;
  contentType: string;
  fileName: string;
}

/** A job as the api and the worker use it. */
export interface Job extends NewJob {
  /** '' until the Representation exists (state `creating`). */
  representationId: string;
  state: 'creating' | 'queued' | 'processing' | 'done' | 'failed';
  publishedAt: string | null;
  createdAt: string;
  /** What a `done` job produced (null before it is done, and for jobs finished before outputs were kept). */
  outputs: JobOutputs | null;
  /** The Representation's `files` as the `done` job wrote them (null before, and for jobs done before they were kept). */
  files: Record<string, unknown> | null;
  /** The reason a `failed` job gives (null otherwise, and for a job failed because its Representation was deleted). */
  error: string | null;
}

/** A job row written before its Representation exists (state `creating`). */
export interface Reservation {
  id: string;
  versionId: string;
  originalKey: string;
}

/** What a finished job produced: the keys guests may be given (docs/review.md). */
export interface JobOutputs {
  reviewKind: mediaPolicy.ReviewKind;
  proxyKey: string;
  thumbnailKey: string;
}

/** The newest `done` job of a version and its outputs (null for a job finished before they were kept). */
export interface FinishedJob {
  id: string;
  versionId: string;
  originalKey: string;
  outputs: JobOutputs | null;
}

/** The attempts of a job so far. */
export interface AttemptSummary {
  count: number;
  /** The error the most recent finished attempt ended with. */
  lastError: string | null;
}

/** The jobs table (schema `media`): reservations, the outbox of the TRANSCODE queue, leases, attempts and outputs. */
export interface JobStore {
  /** Reserves the job (state `creating`) before its Representation is created. */
  reserve(j: NewJob): Promise<void>;
  /** Gives a reservation its Representation: the job is queued. False when it was no reservation any more. */
  attach(id: string, representationId: string): Promise<boolean>;
  /** Drops a reservation whose Representation was never created. */
  dropReservation(id: string): Promise<void>;
  /** Reservations older than `ageMs`: uploads whose process stopped while creating the Representation. */
  staleReservations(ageMs: number, limit?: number): Promise<Reservation[]>;
  get(id: string): Promise<Job | undefined>;
  /** The latest upload of a Version. */
  latestForVersion(versionId: string): Promise<Job | undefined>;
  markPublished(id: string): Promise<void>;
  /**
   * Jobs to (re)publish: never published and older than `graceMs`, or unfinished without progress
   * for `staleMs`, or finished for `staleMs` with their Representation's copy behind (`markCopied`).
   */
  toPublish(graceMs: number, staleMs: number, limit?: number): Promise<{ id: string; published: boolean }[]>;
  /** Marks a job as published again now (re-queued by the sweeper), so it is not picked again at once. */
  touch(id: string): Promise<void>;
  /** Takes the job for `owner` for `leaseMs` unless another worker holds a live lease. */
  claim(id: string, owner: string, leaseMs: number): Promise<boolean>;
  /** Extends the lease while the worker is busy. */
  renew(id: string, owner: string, leaseMs: number): Promise<void>;
  /** Drops the lease so the next delivery can take the job at once. */
  release(id: string, owner: string): Promise<void>;
  /** Ends the job (lease dropped), `failed` with the reason it gives. */
  finish(id: string, state: 'done' | 'failed', error?: string | null): Promise<void>;
  /** Records that the Representation now shows `state` (the job's state, still): its copy is sent. */
  markCopied(id: string, state: 'done' | 'failed'): Promise<void>;
  /** Ends the job `done` with its outputs and files, in one statement. */
  finishDone(id: string, outputs: JobOutputs, files: Record<string, unknown>): Promise<void>;
  /** Attempts started so far and the last recorded error. */
  attempts(jobId: string): Promise<AttemptSummary>;
  /** Records the start of an attempt for one delivery of the job's message; returns its number. */
  startAttempt(jobId: string, delivery: { streamSeq: number; count: number }, worker: string): Promise<number>;
  endAttempt(jobId: string, attempt: number, outcome: 'done' | 'failed' | 'retry' | 'interrupted', error: string | null): Promise<void>;
  /** Forgets an attempt that a dependency failure cut short (it does not count). */
  deleteAttempt(jobId: string, attempt: number): Promise<void>;
  /** Keeps what the job produced. */
  recordOutputs(id: string, o: JobOutputs): Promise<void>;
  /** Per version among `versionIds`, the newest `done` job (versions without one are left out). */
  newestDone(versionIds: readonly string[]): Promise<FinishedJob[]>;
  /** True when a later upload of the same Version is already done (its thumbnail must win). */
  newerDoneExists(job: Job): Promise<boolean>;
}

/** What is known about a stored object. */
export interface ObjectInfo {
  size: number;
  /** Quoted, as sent in an ETag header. */
  etag: string;
  contentType: string;
}

/** The media objects (originals, thumbnails, proxies). A missing object is `not_found`, a store that does not answer `unavailable`. */
export interface MediaObjects {
  putStream(key: string, body: Readable, contentType: string, sizeHint?: number): Promise<void>;
  putBuffer(key: string, body: Buffer, contentType: string): Promise<void>;
  /** Stores a local file; returns its size. */
  putFile(key: string, file: string, contentType: string): Promise<number>;
  download(key: string, file: string, signal?: AbortSignal): Promise<void>;
  stat(key: string): Promise<ObjectInfo>;
  readRange(key: string, start: number, length: number): Promise<Readable>;
  remove(keys: string[]): Promise<void>;
}

/** The transcode fields of a Representation as media-transcode reads and writes them (docs/media.md). */
export interface RepresentationFields {
  transcode_status?: string;
  transcode_error?: string | null;
  review_kind?: string | null;
  review_media_key?: string | null;
  thumbnail_media_key?: string | null;
  attempts?: number;
  files?: Record<string, unknown>;
}

/** Reads a Representation's fields in records (`not_found` once it is deleted). */
export interface RepresentationReader {
  getRepresentation(id: string, ctx: CallContext): Promise<{ data: RepresentationFields }>;
}

/** Writes a Representation's transcode fields and its Version's thumbnail (as the media service). */
export interface RepresentationWriter {
  updateRepresentation(id: string, patch: RepresentationFields, ctx: CallContext): Promise<unknown>;
  setVersionThumbnail(versionId: string, representationId: string, ctx: CallContext): Promise<void>;
}

/** The Representation's `data` as media-transcode writes it: its transcode fields plus what names it. */
export interface RepresentationData extends RepresentationFields {
  name?: string;
  version?: { type: 'Version'; id: string };
}

/** What the flows read of a record; the adapter's record type `R` carries the rest (the upload answers with it). */
export interface RecordRef {
  id: string;
  projectId?: string | undefined;
}

/**
 * The records calls of an upload and of the recovery of interrupted ones: every write made as
 * the media service (docs/api-notes.md, "Roles and who may write").
 */
export interface UploadRecords<R extends RecordRef = RecordRef> {
  /** The Version (`not_found` when it does not exist or is retired). */
  getVersion(id: string, ctx: CallContext): Promise<R>;
  /** Creates the Representation as the uploading principal. */
  createRepresentation(projectId: string | undefined, data: RepresentationData, ctx: CallContext): Promise<R>;
  /** The Representation an upload of `originalKey` created for `versionId`, if any. */
  findUpload(versionId: string, originalKey: string, ctx: CallContext): Promise<R | undefined>;
}

/** Everything media-transcode asks of records (records/records.client.ts implements it). */
export interface MediaRecordsPort<R extends RecordRef = RecordRef> extends UploadRecords<R>, RepresentationReader, RepresentationWriter {}

/** The message of one job on the TRANSCODE work queue. */
export interface TranscodeMessage {
  job_id: string;
}

/** The TRANSCODE work queue as an upload uses it. */
export interface TranscodeQueue {
  /** Publishes a new job; false when it was left to the sweeper (the upload still succeeds). */
  publishNow(jobId: string): Promise<boolean>;
}

/** How long one tool run may take, and what stops it early. */
export interface ToolRun {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * ffmpeg and ffprobe as the worker runs them: a run past its time (or stopped) is killed; a failed
 * run is a `TranscodeFailure` with a readable reason.
 */
export interface TranscodeTools {
  /** ffprobe's view of `file` (format and streams). */
  probe(file: string, run: ToolRun): Promise<ProbeJson>;
  /** Runs ffmpeg with `args`; resolves once it exits 0. */
  ffmpeg(args: string[], run: ToolRun): Promise<void>;
  /** What the log keeps of a failed run (its exit and the end of its stderr), when `err` is one. */
  failureDetail(err: unknown): { exit: string; stderr: string } | undefined;
}
