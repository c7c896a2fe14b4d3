/**
 * Test kit and local stack: throwaway databases and stream prefixes, the S3 stand-in and
 * the process supervisor used by `npm start`, the end-to-end tests and the benchmarks.
 */
export * from './database.js';
export * from './nats.js';
export * from './ports.js';
export * from './s3.standin.js';
export * from './postgres.embedded.js';
export * from './nats.server.js';
export * from './deps.js';
export * from './service.catalog.js';
export * from './service.process.js';
export * from './stack.js';
export * from './errors.js';
export * from './secrets.js';
export * from './ffmpeg.js';
export * from './webhook.receiver.js';
export * from './start.check.js';
