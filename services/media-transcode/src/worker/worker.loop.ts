/**
 * The worker's pull loop: one job at a time from the shared durable consumer (scale by running
 * more workers). Stopping aborts the job in progress (its ffmpeg is killed and the message handed
 * back at once for another worker) and ends the loop.
 */
import type { Consumer } from '@nats-io/jetstream';
import type { Logger } from '@reelbase/lib-platform';
import type { JobProcessor } from './job.processor.js';

/** How long one pull waits for a job before asking again (also bounds how long a stop waits). */
const PULL_EXPIRES_MS = 2_000;

export class WorkerLoop {
  private readonly stopping = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    private readonly consumer: Consumer,
    private readonly processor: JobProcessor,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      let msg;
      try {
        msg = await this.consumer.next({ expires: PULL_EXPIRES_MS });
      } catch (err) {
        if (signal.aborted) break;
        this.logger.warn({ err }, 'transcode pull failed; retrying');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (!msg) continue;
      if (signal.aborted) {
        msg.nak(0);
        break;
      }
      try {
        await this.processor.handle(msg, signal);
      } catch (err) {
        // Never ends the loop: the message comes back after its ack wait.
        this.logger.error({ err }, 'transcode job handling failed');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.running;
  }
}
