import { defineConfig } from 'vitest/config';

// Unit tests (src/**/*.spec.ts, beside the code) and integration tests
// (services/*/test/*.int.spec.ts, against the real PostgreSQL and NATS).
// End-to-end tests have their own config in test/.
export default defineConfig({
  test: {
    include: ['services/*/src/**/*.spec.ts', 'services/*/test/**/*.spec.ts', 'proto/src/**/*.spec.ts', 'scripts/**/*.spec.ts', 'bench/src/**/*.spec.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
