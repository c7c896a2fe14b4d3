/**
 * Entry point of the baseline as its own process (the bench starts it, like each service
 * of the stack runs in its own process). Prints `{"listening": <port>}` once ready.
 */
import { startBaselineServer } from './baseline.server.js';

const env = process.env;
const server = await startBaselineServer({
  databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/reelbase',
  port: Number(env.PORT ?? 0),
  poolSize: Number(env.POOL_SIZE ?? 16),
  schema: env.TABLE_SCHEMA ?? 'records',
  actor: env.ACTOR_ID || null,
});
process.stdout.write(`${JSON.stringify({ listening: server.port })}\n`);

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
