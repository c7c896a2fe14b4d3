/**
 * `node services/records/dist/main.js`: load the configuration, start, stop gracefully.
 */
import { Shutdown, createLogger } from '@reelbase/lib-platform';
import { loadRecordsConfig } from './config.js';
import { startRecords } from './service.js';

const config = loadRecordsConfig();
const logger = createLogger('records', config.LOG_LEVEL);

try {
  const running = await startRecords(config, logger);
  new Shutdown(logger, config.SHUTDOWN_TIMEOUT_MS).add('records', () => running.stop()).install();
  logger.info({ grpcPort: running.grpcPort, httpPort: running.httpPort }, 'records started');
} catch (err) {
  logger.fatal({ err }, 'records failed to start');
  process.exit(1);
}
