import { defineConfig } from 'vitest/config';

// Unit tests (src/**/*.spec.ts, beside the code) and integration tests
// (services/*/test/*.int.spec.ts, against the real PostgreSQL and NATS).
// End-to-end tests have their own config in test/.
export default defineConfig({
  test: {
    include: [
      'services/*/src/**/*.spec.ts',
      'services/*/test/**/*.spec.ts',
      'proto/src/**/*.spec.ts',
      'scripts/**/*.spec.ts',
      'bench/src/**/*.spec.ts',
      'clients/*/src/**/*.spec.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    // Two files at a time (most of their time is spent waiting on PostgreSQL, NATS and child
    // processes), each worker keeping its module cache from one file to the next: importing the
    // workspace once per file cost more than the tests themselves. No test changes module state
    // another relies on (no module mocks, no stubbed globals).
    maxWorkers: 2,
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
