/**
 * The test-only fault switch (SCHEMA_FAULT): kills the process with SIGKILL at a chosen point
 * of a rename, so tests can prove an unfinished rename is completed at the next start.
 */
import { ProcessFault, type Logger } from '@reelbase/lib-platform';
import type { SchemaFault } from '../../config.js';
import type { SchemaFaults } from '../domain/ports.js';

export class FaultSwitch implements SchemaFaults {
  private readonly fault: ProcessFault<SchemaFault>;

  constructor(mode: SchemaFault | undefined, logger: Logger) {
    this.fault = new ProcessFault('SCHEMA_FAULT', mode, logger);
  }

  afterJournal(): void {
    this.fault.crashIf('crash_after_journal', 'after the rename journal entry');
  }
}
