/**
 * One delivery of a transcode job (docs/media.md, "Worker"): decide (skip a finished job, give
 * up after the set attempts), claim the job, count the attempt, then probe, thumbnail (stored and
 * set at once), proxy, `done`. Heartbeats (`working()` and the lease) run while ffmpeg does. A
 * failure about the file retries until TRANSCODE_MAX_ATTEMPTS and then ends `failed` with its
 * reason; a failure of a dependency (store, records, database) is retried without using up an
 * attempt. Nothing a file does can throw out of here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import { AppError, IntervalLoop, isUuid, newMediaPrefix, systemContext, type Logger } from '@reelbase/lib-platform';
import { interpretProbe, type ProbedSource } from '../domain/probe.rules.js';
import { decideDelivery } from '../domain/reviewable.rules.js';
import { TranscodeFailure } from '../domain/transcode.failure.js';
import { proxyArgs, thumbnailArgs, type PlanLimits } from '../domain/transcode.plan.js';
import type { WorkerMetrics } from '../media.metrics.js';
import type { Job, JobOutputs, JobStore, MediaObjects, RepresentationReader, RepresentationWriter, TranscodeMessage, TranscodeTools } from '../domain/ports.js';
import { TranscodeState } from '../domain/transcode.state.js';

export interface ProcessorOptions {
  store: MediaObjects;
  records: RepresentationReader & RepresentationWriter;
  jobs: JobStore;
  logger: Logger;
  metrics: WorkerMetrics;
  workerId: string;
  /** ffmpeg and ffprobe (transcode/ffmpeg.runner.ts). */
  tools: TranscodeTools;
  timeoutMs: number;
  threads: number;
  maxDurationS: number;
  ackWaitMs: number;
  maxAttempts: number;
  retryDelayMs: number;
  tmpDir?: string;
  slowProxy?: boolean;
}

/** The job's original being copied into its scratch directory. */
interface FetchedOriginal {
  /** The scratch directory (made first). */
  dir: Promise<string>;
  /** The local copy's path, once it is complete; rejects when the copy fails. */
  ready: Promise<string>;
  /** Stops the copy and removes the directory. */
  drop(): Promise<void>;
}

/** Longest probe or thumbnail run. */
const QUICK_STEP_MS = 120_000;

/** Deliveries of one message after which a job that only ever met dependency failures gives up. */
const MAX_DEFERRALS = 50;

/** What a conversion produced: the kind, the outputs and the Representation's `files`. */
interface Converted {
  kind: string;
  outputs: JobOutputs;
  files: Record<string, unknown>;
}

export class JobProcessor {
  /** The one writer of the transcode state: the job row first, then the Representation's copy. */
  private readonly state: TranscodeState;

  constructor(private readonly o: ProcessorOptions) {
    this.state = new TranscodeState({ jobs: o.jobs, records: o.records });
  }

  /** Handles one message; always acks, naks or terminates it. */
  async handle(msg: JsMsg, stopping: AbortSignal): Promise<void> {
    const { logger } = this.o;
    let body: TranscodeMessage;
    try {
      body = msg.json<TranscodeMessage>();
    } catch {
      msg.term('not a transcode job');
      return;
    }
    if (!isUuid(body?.job_id)) {
      msg.term('not a transcode job');
      return;
    }
    try {
      await this.handleJob(body.job_id, msg, stopping);
    } catch (err) {
      // A dependency is down (or the worker stops): try again later, without using an attempt.
      logger.warn({ err, job_id: body.job_id }, 'transcode job deferred');
      try {
        msg.nak(stopping.aborted ? 0 : this.o.retryDelayMs);
      } catch {
        // NATS is away too: the message comes back after the ack wait.
      }
    }
  }

  private async handleJob(jobId: string, msg: JsMsg, stopping: AbortSignal): Promise<void> {
    const { jobs, logger } = this.o;
    const job = await jobs.get(jobId);
    if (!job) {
      logger.warn({ job_id: jobId }, 'transcode message for an unknown job dropped');
      msg.term('unknown job');
      return;
    }
    // The original is fetched while the delivery is decided and claimed below (four round trips
    // that no longer stand before the probe); whatever the delivery does, its copy goes at the end.
    const original = this.fetchOriginal(job);
    try {
      await this.decideAndRun(job, msg, stopping, original);
    } finally {
      await original.drop();
    }
  }

  /** Starts copying the job's original into a fresh scratch directory (`TRANSCODE_TMP_DIR`). */
  private fetchOriginal(job: Job): FetchedOriginal {
    const stop = new AbortController();
    const dir = mkdtemp(join(this.o.tmpDir ?? tmpdir(), 'reelbase-transcode-'));
    dir.catch(() => {});
    const input = dir.then((d) => join(d, 'original'));
    const ready = job.originalSize === 0 ? input : input.then(async (file) => (await this.o.store.download(job.originalKey, file, stop.signal), file));
    ready.catch(() => {});
    return {
      dir,
      ready,
      drop: async () => {
        stop.abort(new Error('the delivery does no work'));
        await ready.catch(() => {});
        await dir.then((d) => rm(d, { recursive: true, force: true })).catch(() => {});
      },
    };
  }

  /** Decides the delivery (skip, give up, defer, run) and runs the attempt on `original`. */
  private async decideAndRun(job: Job, msg: JsMsg, stopping: AbortSignal, original: FetchedOriginal): Promise<void> {
    const { jobs, records, logger, metrics } = this.o;
    const ctx = systemContext();
    /** What the Representation shows (its copy of the state). */
    let copied: string | undefined;
    // Asked side by side with the record (two round trips in the time of one before the job starts).
    const priorAttempts = jobs.attempts(job.id);
    priorAttempts.catch(() => {});
    try {
      copied = (await records.getRepresentation(job.representationId, ctx)).data.transcode_status;
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') {
        // The Representation was deleted: nothing to show the result on.
        await this.state.representationGone(job);
        metrics.attempts.inc({ outcome: 'skipped' });
        msg.ack();
        return;
      }
      throw err;
    }
    const prior = await priorAttempts;
    // The job row decides (it owns the state); a finished job's copy that was not sent is sent now.
    const decision = decideDelivery(job.state, prior.count, this.o.maxAttempts, prior.lastError);
    if (decision.action === 'skip') {
      if (await this.state.resend(job, copied, ctx)) logger.info({ job_id: job.id, state: job.state }, 'transcode state copied to the Representation again');
      metrics.attempts.inc({ outcome: 'skipped' });
      logger.info({ job_id: job.id, why: decision.why }, 'transcode job skipped');
      msg.ack();
      return;
    }
    if (decision.action === 'give_up') {
      await this.fail(job, decision.reason, prior.count, ctx);
      metrics.attempts.inc({ outcome: 'failed' });
      msg.ack();
      return;
    }
    if (msg.info.deliveryCount > this.o.maxAttempts + MAX_DEFERRALS) {
      await this.fail(job, 'the conversion could not run: a service it needs stayed unavailable', prior.count, ctx);
      msg.ack();
      return;
    }
    if (!(await jobs.claim(job.id, this.o.workerId, this.o.ackWaitMs))) {
      // Another worker holds it (a redelivery racing a live attempt): look again after its lease.
      msg.nak(this.o.ackWaitMs);
      return;
    }
    const attempt = await jobs.startAttempt(job.id, { streamSeq: msg.seq, count: msg.info.deliveryCount }, this.o.workerId);
    metrics.queueWait.observe(Math.max(0, (Date.now() - Date.parse(job.createdAt)) / 1000));
    // For this attempt only. Each beat returns at once: the renewal runs beside it, so a slow
    // database never delays the next in-progress signal to NATS.
    const heartbeat = new IntervalLoop(
      Math.max(100, Math.floor(this.o.ackWaitMs / 3)),
      () => {
        try {
          msg.working();
        } catch (err) {
          // NATS is away: the lease still holds the job; the ack wait decides the rest.
          logger.warn({ err, job_id: job.id }, 'in-progress heartbeat not sent');
        }
        jobs.renew(job.id, this.o.workerId, this.o.ackWaitMs).catch((err: unknown) => logger.warn({ err, job_id: job.id }, 'lease renewal failed'));
      },
      (err) => logger.warn({ err, job_id: job.id }, 'in-progress heartbeat failed'),
    );
    heartbeat.start();
    const abort = new AbortController();
    const onStop = () => abort.abort(new Error('the worker is stopping'));
    stopping.addEventListener('abort', onStop, { once: true });
    const started = process.hrtime.bigint();
    let kind = 'unknown';
    /** Set once the job row says `done`: what fails after that is only the copy, sent again by the next delivery. */
    let jobDone = false;
    try {
      // The `processing` update travels while the original downloads and is probed (it is
      // awaited before the thumbnail is shown, so the record's states stay in order).
      const processing = this.state.processing(job, attempt, ctx);
      processing.catch(() => {});
      const converted = await this.transcode(job, original, abort.signal, ctx, (k) => (kind = k), processing);
      await this.state.jobDone(job, converted.outputs, converted.files);
      jobDone = true;
      await jobs.endAttempt(job.id, attempt, 'done', null);
      await this.state.copyDone(job, converted.outputs, converted.files, ctx);
      metrics.attempts.inc({ outcome: 'done' });
      metrics.transcodeSeconds.observe({ step: 'job', kind, outcome: 'ok' }, Number(process.hrtime.bigint() - started) / 1e9);
      msg.ack();
      logger.info({ job_id: job.id, representation_id: job.representationId, attempt, kind }, 'reviewable done');
    } catch (err) {
      metrics.transcodeSeconds.observe({ step: 'job', kind, outcome: 'failed' }, Number(process.hrtime.bigint() - started) / 1e9);
      if (jobDone) throw err;
      if (err instanceof TranscodeFailure && !abort.signal.aborted) {
        const reason = err.message;
        logger.info({ job_id: job.id, attempt, reason, tool: this.o.tools.failureDetail(err) }, 'transcode attempt failed');
        if (attempt < this.o.maxAttempts) {
          await jobs.endAttempt(job.id, attempt, 'retry', reason);
          await jobs.release(job.id, this.o.workerId);
          metrics.attempts.inc({ outcome: 'retry' });
          msg.nak(this.o.retryDelayMs);
        } else {
          await jobs.endAttempt(job.id, attempt, 'failed', reason);
          await this.fail(job, reason, attempt, ctx);
          metrics.attempts.inc({ outcome: 'failed' });
          msg.ack();
        }
        return;
      }
      // Not the file's fault: this attempt does not count.
      await jobs.deleteAttempt(job.id, attempt).catch(() => {});
      await jobs.release(job.id, this.o.workerId).catch(() => {});
      metrics.attempts.inc({ outcome: 'interrupted' });
      throw err;
    } finally {
      // Its beats return at once, so there is never a tick in flight to wait for.
      void heartbeat.stop();
      stopping.removeEventListener('abort', onStop);
    }
  }

  private async fail(job: Job, reason: string, attempts: number, ctx: ReturnType<typeof systemContext>): Promise<void> {
    // The job first: a copy that is not sent is sent again by the redelivery, from the job row.
    await this.state.failed(job, reason, attempts, ctx);
    this.o.logger.info({ job_id: job.id, representation_id: job.representationId, reason }, 'reviewable failed');
  }

  /** The conversion itself. Throws TranscodeFailure for the file's faults. */
  private async transcode(
    job: Job,
    original: FetchedOriginal,
    signal: AbortSignal,
    ctx: ReturnType<typeof systemContext>,
    setKind: (k: string) => void,
    processing: Promise<unknown>,
  ): Promise<Converted> {
    const { store, metrics } = this.o;
    if (job.originalSize === 0) {
      await processing;
      throw new TranscodeFailure('the file is empty (0 bytes)');
    }
    const dir = await original.dir;
    const limits: PlanLimits = { threads: this.o.threads, maxDurationS: this.o.maxDurationS };
    // Probe and thumbnail are quick whatever the source: they never get more than 2 minutes.
    // Steps run side by side (the thumbnail is stored while the proxy encodes): whatever fails
    // first ends the attempt and stops the tools still running.
    const local = new AbortController();
    const onAbort = () => local.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const run = { timeoutMs: Math.min(this.o.timeoutMs, QUICK_STEP_MS), signal: local.signal };
    const step = async <T>(name: string, kind: string, fn: () => Promise<T>): Promise<T> => {
      const t0 = process.hrtime.bigint();
      let outcome = 'failed';
      try {
        const r = await fn();
        outcome = 'ok';
        return r;
      } finally {
        metrics.transcodeSeconds.observe({ step: name, kind, outcome }, Number(process.hrtime.bigint() - t0) / 1e9);
      }
    };
    try {
      // `fetch`: how long the probe still waited for the original once the job was claimed.
      const input = await step('fetch', 'unknown', () => original.ready);
      const probed = step('probe', 'unknown', async () => interpretProbe(await this.o.tools.probe(input, run), this.o.maxDurationS));
      probed.catch(() => {});
      await processing;
      const source: ProbedSource = await probed;
      setKind(source.kind);

      // The thumbnail and the proxy encode side by side (docs/media.md, "Worker"): the thumbnail,
      // a frame or two, is done long before the proxy and is stored and shown at once; the proxy
      // no longer waits for it. A thumbnail that fails stops the proxy (`local`) and is the
      // attempt's reason; a proxy that fails lets the short thumbnail finish first.
      const thumbFile = join(dir, 'thumb.jpg');
      // Every stored object has a key of its own (128 random bits each): none can be derived from
      // another, so a guest given the proxy's key learns nothing of the original's (docs/media.md).
      const thumbKey = `${newMediaPrefix()}/thumb.jpg`;
      const thumbShown = (async () => {
        await step('thumbnail', source.kind, () => this.o.tools.ffmpeg(thumbnailArgs(input, thumbFile, source, limits), run));
        const size = await store.putFile(thumbKey, thumbFile, 'image/jpeg');
        await this.state.thumbnailShown(job, source.kind, thumbKey, ctx);
        return size;
      })();
      thumbShown.catch(() => local.abort(new Error('the thumbnail failed')));

      const proxyName = source.kind === 'video' ? 'proxy.mp4' : 'proxy.jpg';
      const proxyType = source.kind === 'video' ? 'video/mp4' : 'image/jpeg';
      const proxyFile = join(dir, proxyName);
      const encoded = step('proxy', source.kind, () =>
        this.o.tools.ffmpeg(proxyArgs(input, proxyFile, source, limits, { realtime: this.o.slowProxy }), { ...run, timeoutMs: this.o.timeoutMs }),
      );
      encoded.catch(() => {});
      // The thumbnail's failure is the attempt's reason even when the proxy, stopped for it, ends first.
      const thumbSize = await thumbShown;
      await encoded;
      const proxyKey = `${newMediaPrefix()}/${proxyName}`;
      const proxySize = await step('store', source.kind, () => store.putFile(proxyKey, proxyFile, proxyType));

      const files = {
        original: { key: job.originalKey, size: job.originalSize, content_type: job.contentType, file_name: job.fileName },
        thumbnail: { key: thumbKey, size: thumbSize, content_type: 'image/jpeg' },
        proxy: { key: proxyKey, size: proxySize, content_type: proxyType },
        source: { kind: source.kind, width: source.width, height: source.height, duration_s: source.durationS, has_audio: source.hasAudio },
      };
      return { kind: source.kind, outputs: { reviewKind: source.kind, proxyKey, thumbnailKey: thumbKey }, files };
    } finally {
      local.abort(new Error('the attempt ended'));
      signal.removeEventListener('abort', onAbort);
    }
  }
}
