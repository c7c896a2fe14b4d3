/**
 * The test-only fault switches (RECORDS_FAULT, SCHEMA_FAULT, …): a setting naming a point of a
 * write path at which the process kills itself with SIGKILL, so tests can prove that no crash
 * there loses or duplicates anything. A service wraps one in its own `FaultSwitch` with one
 * method per point (e.g. `afterCommit`, or the outbox relay's `afterPublish` hook).
 */
import type { Logger } from '../logger.js';

export class ProcessFault<M extends string> {
  /**
   * @param setting the environment variable, as it is named in the warning
   * @param mode its value; undefined (the only value outside tests) never kills anything
   */
  constructor(
    private readonly setting: string,
    private readonly mode: M | undefined,
    private readonly logger: Logger,
  ) {
    if (mode) {
      logger.warn({ [setting]: mode }, `${setting}=${mode} is set: this process will kill itself on purpose. Never set it outside tests.`);
    }
  }

  /** Kills the process at once (flushing the log first) when the switch is set to `mode`. */
  crashIf(mode: M, point: string): void {
    if (this.mode !== mode) return;
    this.logger.warn({ [this.setting]: this.mode }, `fault switch: killing the process ${point}`);
    this.logger.flush?.();
    process.kill(process.pid, 'SIGKILL');
  }
}
