/**
 * Entry point: load the configuration, start, stop gracefully on SIGTERM/SIGINT.
 */
import { createLogger, Shutdown } from '@reelbase/lib-platform';
import { loadAuthConfig } from './config.js';
import { startAuth } from './service.js';

const config = loadAuthConfig();
const logger = createLogger('auth', config.LOG_LEVEL);
try {
  const service = await startAuth(config, logger);
  new Shutdown(logger, config.SHUTDOWN_TIMEOUT_MS).add('auth', () => service.stop()).install();
} catch (err) {
  logger.fatal({ err }, 'auth failed to start');
  process.exit(1);
}
