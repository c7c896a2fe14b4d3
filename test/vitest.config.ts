import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// End-to-end tier: the whole stack (every service as its own process, real PostgreSQL and
// NATS) per test file. Files run one after another: each starts four Node processes and the
// machines have two cores.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.e2e.spec.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    fileParallelism: false,
    maxWorkers: 1,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
  },
});
