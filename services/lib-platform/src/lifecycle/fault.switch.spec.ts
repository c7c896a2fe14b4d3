import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logger.js';
import { ProcessFault } from './fault.switch.js';

function recordingLogger() {
  const warnings: [Record<string, unknown>, string][] = [];
  const logger = { warn: (f: Record<string, unknown>, m: string) => warnings.push([f, m]), flush: vi.fn() } as unknown as Logger;
  return { logger, warnings };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('ProcessFault', () => {
  it('is silent and kills nothing when unset', () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    const { logger, warnings } = recordingLogger();
    const fault = new ProcessFault<'crash_after_commit'>('RECORDS_FAULT', undefined, logger);
    fault.crashIf('crash_after_commit', 'after commit');
    expect(kill).not.toHaveBeenCalled();
    expect(warnings).toEqual([]);
  });

  it('warns at start-up, then SIGKILLs the process only at the point it names', () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true);
    const { logger, warnings } = recordingLogger();
    const fault = new ProcessFault<'crash_after_commit' | 'crash_after_publish'>('RECORDS_FAULT', 'crash_after_publish', logger);
    expect(warnings[0]![1]).toMatch(/RECORDS_FAULT=crash_after_publish is set/);
    fault.crashIf('crash_after_commit', 'after commit');
    expect(kill).not.toHaveBeenCalled();
    fault.crashIf('crash_after_publish', 'after publish');
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
    expect(warnings[1]).toEqual([{ RECORDS_FAULT: 'crash_after_publish' }, 'fault switch: killing the process after publish']);
  });
});
