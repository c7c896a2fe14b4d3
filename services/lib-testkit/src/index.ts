/**
 * Test kit and local stack: throwaway databases and stream prefixes, the S3 stand-in and
 * the process supervisor used by `npm start`, the end-to-end tests and the benchmarks.
 */
export * from './database.js';
export * from './nats.js';
