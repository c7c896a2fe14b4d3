/**
 * The test-only fault switch (RECORDS_FAULT): kills the process with SIGKILL at a chosen
 * point of the write path, so tests can prove that no crash loses or duplicates an event.
 */
import { ProcessFault, type Logger } from '@reelbase/lib-platform';
import type { RecordsFault } from './config.js';

export class FaultSwitch {
  private readonly fault: ProcessFault<RecordsFault>;

  constructor(mode: RecordsFault | undefined, logger: Logger) {
    this.fault = new ProcessFault('RECORDS_FAULT', mode, logger);
  }

  /** Right after a write's transaction commits, before its event can be published. */
  afterCommit(): void {
    this.fault.crashIf('crash_after_commit', 'after commit');
  }

  /** Right after JetStream acknowledged a batch, before its outbox rows are deleted. */
  afterPublish(): void {
    this.fault.crashIf('crash_after_publish', 'after publish');
  }
}
