/**
 * `node services/media-transcode/dist/main.js`: the media api under the shared lifecycle (lib-platform `runService`).
 */
import { runService } from '@reelbase/lib-platform';
import { loadMediaApiConfig } from './config.js';
import { startMediaApi } from './service.js';

await runService({ name: 'media-transcode', loadConfig: loadMediaApiConfig, start: startMediaApi });
