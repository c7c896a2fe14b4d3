/**
 * `node services/records/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startRecords`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadRecordsConfig } from './config.js';
import { startRecords } from './service.js';

await runService({ name: 'records', loadConfig: loadRecordsConfig, start: startRecords });
