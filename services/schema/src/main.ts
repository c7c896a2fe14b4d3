/**
 * `node services/schema/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startSchema`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadSchemaConfig } from './config.js';
import { startSchema } from './service.js';

await runService({ name: 'schema', loadConfig: loadSchemaConfig, start: startSchema });
