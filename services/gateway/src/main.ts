import { createLogger, Shutdown } from '@reelbase/lib-platform';
import { loadGatewayConfig } from './config.js';
import { startGateway } from './service.js';

const config = loadGatewayConfig();
const logger = createLogger('gateway', config.LOG_LEVEL);
const gateway = await startGateway(config, logger);
new Shutdown(logger, config.SHUTDOWN_TIMEOUT_MS).add('gateway', () => gateway.stop()).install();
