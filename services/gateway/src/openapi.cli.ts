/**
 * Writes the gateway's OpenAPI document, built from the same route list the gateway serves at
 * `GET /openapi.json`, without starting anything: `node dist/openapi.cli.js [file]` (stdout
 * without a file). The TypeScript client generates its types from it at build time.
 */
import { writeFileSync } from 'node:fs';
import { Metrics, Readiness, createLogger } from '@reelbase/lib-platform';
import { createApp } from './app.js';
import type { Peers } from './clients/peers.js';
import { AuthCache } from './domain/auth.cache.js';
import { ProjectAccess } from './domain/project.access.js';
import { RateLimiter } from './domain/rate.limiter.js';

/** The OpenAPI document of every route; the peers are never called while building it. */
export function openApiDocument(): Record<string, unknown> {
  return createApp({
    logger: createLogger('gateway', 'silent'),
    metrics: new Metrics('gateway'),
    peers: {} as Peers,
    auth: new AuthCache(async () => ({}), 5),
    limiter: new RateLimiter(1, 1),
    readiness: new Readiness(),
    bodyLimitBytes: 1024,
    access: new ProjectAccess(async () => []),
  }).openapi;
}

const text = `${JSON.stringify(openApiDocument(), null, 2)}\n`;
const file = process.argv[2];
if (file) writeFileSync(file, text);
else process.stdout.write(text);
