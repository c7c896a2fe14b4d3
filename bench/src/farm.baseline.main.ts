/**
 * The farm's baseline (bench/README.md, "Farm claims"): one Express + pg process whose
 * `POST /claim` runs the records service's own claim statement (FarmRepository.claim, the same
 * SQL text, from the records package's farm module) on the same database, with no authentication, no validation beyond the body's
 * shape, no gRPC and no gateway. Prints `{"listening": <port>}` once ready.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { natsNames, newId } from '@reelbase/lib-platform';
import { farm as farmModule } from '@reelbase/records';

const { FarmRepository, newLease, openFarmPool } = farmModule;

const env = process.env;
const pool = openFarmPool({ databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/reelbase', max: Number(env.POOL_SIZE ?? 10) });
const farm = new FarmRepository(pool, natsNames(env.NATS_PREFIX ?? ''));
const app = express();
app.disable('x-powered-by');
app.use(express.json({ limit: '64kb' }));

app.post('/claim', async (req, res) => {
  const body = req.body as { pool?: unknown; worker?: unknown; lease_seconds?: unknown };
  if (typeof body?.pool !== 'string' || typeof body.worker !== 'string') {
    res.status(422).json({ error: 'body must be {"pool", "worker"}' });
    return;
  }
  try {
    const lease = newLease();
    const out = await farm.claim(
      {
        pool: body.pool,
        worker: body.worker,
        kinds: null,
        leaseSeconds: typeof body.lease_seconds === 'number' ? body.lease_seconds : 300,
        leaseDigest: lease.digest,
        reader: null,
      },
      { eventId: newId(), actor: null },
    );
    if (out.kind !== 'given') {
      res.status(204).end();
      return;
    }
    const c = out.chunk;
    res.status(200).json({
      job: { id: out.job.id, status: out.job.status },
      chunk: { id: c.id, index: c.index, frames: c.frames, lease: lease.token, lease_expires_at: c.leaseExpiresAt },
    });
  } catch (err) {
    res.status(500).json({ error: (err as Error).message });
  }
});

const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1');
server.once('listening', () => process.stdout.write(`${JSON.stringify({ listening: (server.address() as AddressInfo).port })}\n`));
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    server.closeAllConnections();
    server.close(() => {
      pool.destroy().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  });
}
