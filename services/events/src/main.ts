/**
 * `node services/events/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startEvents`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadEventsConfig } from './config.js';
import { startEvents } from './service.js';

await runService({ name: 'events', loadConfig: loadEventsConfig, start: startEvents });
