/**
 * `node services/notifier/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startNotifier`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadNotifierConfig } from './config.js';
import { startNotifier } from './service.js';

await runService({ name: 'notifier', loadConfig: loadNotifierConfig, start: startNotifier });
