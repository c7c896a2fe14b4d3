/**
 * A start that fails half-way (NATS unreachable, after the pool opened and migrations ran)
 * rejects and leaves nothing open: the shared lifecycle closes what it had opened.
 */
import { expect, it } from 'vitest';
import { startWithNatsUnreachable } from '@reelbase/lib-testkit';
import { parseRecordsConfig } from '../src/config.js';
import { startRecords } from '../src/service.js';

it('closes its pool when NATS is unreachable at start', async () => {
  const seen = await startWithNatsUnreachable('records', (env, logger) => startRecords(parseRecordsConfig(env), logger));
  expect(seen.error).toBeInstanceOf(Error);
  // Another pool on the same database sees no connection left by the service (named after its schema).
  expect(seen.connections).toBe(0);
  // It did get as far as the database: the migrations ran.
  expect(seen.tables).toBeGreaterThan(0);
});
