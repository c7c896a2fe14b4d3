/**
 * `node services/media-transcode/dist/worker.main.js`: one media worker under the shared lifecycle (lib-platform `runService`).
 */
import { runService } from '@reelbase/lib-platform';
import { loadMediaWorkerConfig } from './config.js';
import { startMediaWorker } from './worker.service.js';

await runService({ name: 'media-worker', loadConfig: loadMediaWorkerConfig, start: startMediaWorker });
