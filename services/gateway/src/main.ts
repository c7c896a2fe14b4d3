/**
 * `node services/gateway/dist/main.js`: the shared lifecycle (lib-platform `runService`) around `startGateway`.
 */
import { runService } from '@reelbase/lib-platform';
import { loadGatewayConfig } from './config.js';
import { startGateway } from './service.js';

await runService({ name: 'gateway', loadConfig: loadGatewayConfig, start: startGateway });
