/**
 * Process entry: load config, start, stop gracefully on SIGTERM/SIGINT.
 */
import { createLogger, Shutdown } from '@reelbase/lib-platform';
import { loadEventsConfig } from './config.js';
import { startEvents } from './service.js';

const config = loadEventsConfig();
const logger = createLogger('events', config.LOG_LEVEL);

try {
  const service = await startEvents(config, logger);
  new Shutdown(logger, config.SHUTDOWN_TIMEOUT_MS).add('events', () => service.stop()).install();
  logger.info({ grpcPort: service.grpcPort, httpPort: service.httpPort }, 'events service started');
} catch (err) {
  logger.fatal({ err }, 'events service failed to start');
  process.exit(1);
}
