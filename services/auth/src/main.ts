/**
 * `node services/auth/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startAuth`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadAuthConfig } from './config.js';
import { startAuth } from './service.js';

await runService({ name: 'auth', loadConfig: loadAuthConfig, start: startAuth });
