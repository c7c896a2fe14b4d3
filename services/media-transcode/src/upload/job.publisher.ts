/**
 * Publishes transcode jobs on the TRANSCODE work queue (Nats-Msg-Id = job id, so a job published
 * twice within the stream's duplicate window is stored once) and runs the sweeper: the outbox
 * side of the jobs table. A job whose publish failed at upload time is published once it is
 * `SWEEP_GRACE_MS` old; an unfinished job nobody has touched for `STALE_JOB_MS` (its message lost
 * with a stream, or dropped) is published again, so no Representation stays `pending` for ever;
 * so is a finished job whose Representation's copy is behind (the worker then only sends the copy).
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import { IntervalLoop, type Logger, type NatsNames } from '@reelbase/lib-platform';
import type { JobStore, TranscodeMessage, TranscodeQueue } from '../domain/ports.js';

export interface JobPublisherOptions {
  js: JetStreamClient;
  names: NatsNames;
  jobs: JobStore;
  logger: Logger;
  sweepIntervalMs: number;
  graceMs: number;
  staleMs: number;
  /** Milliseconds a publish may take before it counts as failed. */
  publishTimeoutMs?: number;
  /** Called for each job the sweeper published. */
  onSwept?: () => void;
  /** Runs before each sweep (the recovery of interrupted uploads). */
  beforeSweep?: () => Promise<unknown>;
}

export class JobPublisher implements TranscodeQueue {
  private readonly sweeper: IntervalLoop;
  private stopped = false;

  constructor(private readonly opts: JobPublisherOptions) {
    this.sweeper = new IntervalLoop(
      opts.sweepIntervalMs,
      () => this.sweepOnce(),
      (err) => opts.logger.warn({ err }, 'transcode sweep failed'),
    );
  }

  private async publish(jobId: string, msgID: string): Promise<void> {
    const { js, names } = this.opts;
    const body: TranscodeMessage = { job_id: jobId };
    await js.publish(names.transcodeSubject, JSON.stringify(body), { msgID, timeout: this.opts.publishTimeoutMs ?? 3000 });
  }

  /** Publishes a new job; a failure is logged and left to the sweeper (the upload still succeeds). */
  async publishNow(jobId: string): Promise<boolean> {
    try {
      await this.publish(jobId, jobId);
      await this.opts.jobs.markPublished(jobId);
      return true;
    } catch (err) {
      this.opts.logger.warn({ err, job_id: jobId }, 'transcode job not published yet; the sweeper will publish it');
      return false;
    }
  }

  /** One sweep; returns how many jobs were published. */
  async sweepOnce(): Promise<number> {
    const { jobs, logger } = this.opts;
    await this.opts.beforeSweep?.().catch((err: unknown) => logger.warn({ err }, 'recovery of interrupted uploads failed'));
    const due = await jobs.toPublish(this.opts.graceMs, this.opts.staleMs);
    let n = 0;
    for (const job of due) {
      if (this.stopped) break;
      try {
        // A re-queue needs its own message id, or the duplicate window would drop it.
        await this.publish(job.id, job.published ? `${job.id}.${Date.now()}` : job.id);
        await jobs.touch(job.id);
        n++;
        this.opts.onSwept?.();
        logger.info(
          { job_id: job.id, requeued: job.published },
          job.published ? 'stalled transcode job published again' : 'transcode job published by the sweeper',
        );
      } catch (err) {
        logger.warn({ err, job_id: job.id }, 'sweeper could not publish a transcode job');
        break;
      }
    }
    return n;
  }

  start(): void {
    this.sweeper.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.sweeper.stop();
  }
}
