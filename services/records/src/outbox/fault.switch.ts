/**
 * The test-only fault switch (RECORDS_FAULT): kills the process with SIGKILL at a chosen
 * point of the write path, so tests can prove that no crash loses or duplicates an event.
 */
import type { Logger } from '@reelbase/lib-platform';
import type { RecordsFault } from '../config.js';

export class FaultSwitch {
  constructor(
    private readonly mode: RecordsFault | undefined,
    private readonly logger: Logger,
  ) {
    if (mode) {
      logger.warn({ RECORDS_FAULT: mode }, `RECORDS_FAULT=${mode} is set: this process will kill itself on purpose. Never set it outside tests.`);
    }
  }

  /** Right after a write's transaction commits, before its event can be published. */
  afterCommit(): void {
    if (this.mode === 'crash_after_commit') this.crash('after commit');
  }

  /** Right after JetStream acknowledged a batch, before its outbox rows are deleted. */
  afterPublish(): void {
    if (this.mode === 'crash_after_publish') this.crash('after publish');
  }

  private crash(point: string): void {
    this.logger.warn({ RECORDS_FAULT: this.mode }, `fault switch: killing the process ${point}`);
    this.logger.flush?.();
    process.kill(process.pid, 'SIGKILL');
  }
}
