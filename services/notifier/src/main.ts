/**
 * `node services/notifier/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startNotifier`,
 * at the CPU priority `NOTIFIER_NICE` gives it (docs/notifier.md, "CPU priority").
 */
import { setPriority } from 'node:os';
import { runService } from '@reelbase/lib-platform';
import { loadNotifierConfig } from './config.js';
import { startNotifier } from './service.js';

await runService({
  name: 'notifier',
  loadConfig: loadNotifierConfig,
  start: (config, logger) => {
    try {
      // Raising one's own nice value needs no privilege; a container runtime that forbids it is told in the log.
      if (config.NOTIFIER_NICE > 0) setPriority(config.NOTIFIER_NICE);
    } catch (err) {
      logger.warn({ err, nice: config.NOTIFIER_NICE }, 'could not lower the CPU priority; running at the default');
    }
    return startNotifier(config, logger);
  },
});
