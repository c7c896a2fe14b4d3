/**
 * The test-only fault switch (SCHEMA_FAULT): kills the process with SIGKILL at a chosen point
 * of a rename, so tests can prove an unfinished rename is completed at the next start.
 */
import type { Logger } from '@reelbase/lib-platform';
import type { SchemaFault } from '../config.js';
import type { SchemaFaults } from '../domain/ports.js';

export class FaultSwitch implements SchemaFaults {
  constructor(
    private readonly mode: SchemaFault | undefined,
    private readonly logger: Logger,
  ) {
    if (mode) {
      logger.warn({ SCHEMA_FAULT: mode }, `SCHEMA_FAULT=${mode} is set: this process will kill itself on purpose. Never set it outside tests.`);
    }
  }

  afterJournal(): void {
    if (this.mode !== 'crash_after_journal') return;
    this.logger.warn({ SCHEMA_FAULT: this.mode }, 'fault switch: killing the process after the rename journal entry');
    this.logger.flush?.();
    process.kill(process.pid, 'SIGKILL');
  }
}
