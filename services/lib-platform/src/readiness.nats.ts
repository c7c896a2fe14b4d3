/**
 * The readiness check of a NATS connection, the one every service adds to its {@link Readiness}
 * as `nats`: the connection is open and the server answers a flush.
 */
import type { NatsConnection } from './nats/connection.js';

export async function pingNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error('NATS connection closed');
  await nc.flush();
}
