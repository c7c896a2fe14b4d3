/**
 * Port helpers for the local stack and tests: pick free ports, check that a port
 * is free again after a stop, and wait for an HTTP endpoint to answer 200.
 */
import { createServer, type Server } from 'node:net';

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host, exclusive: true }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Ports are picked below Linux's default ephemeral range (32768–60999): a port the kernel
 * hands out for OUTGOING connections (a database pool, a NATS client) could otherwise be
 * taken between the moment it is picked here and the moment a service binds it.
 */
const PICK_LOW = 20_000;
const PICK_HIGH = 32_000;

/**
 * Returns `count` distinct free TCP ports. They are held open together while picking so
 * no port is handed out twice, then released for the caller to bind.
 */
export async function freePorts(count: number, host = '0.0.0.0'): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    for (let attempts = 0; ports.length < count; attempts++) {
      if (attempts > 2000) throw new Error(`no ${count} free ports between ${PICK_LOW} and ${PICK_HIGH}`);
      const port = PICK_LOW + Math.floor(Math.random() * (PICK_HIGH - PICK_LOW));
      if (ports.includes(port)) continue;
      try {
        servers.push(await listen(port, host));
        ports.push(port);
      } catch {
        // Taken: try another.
      }
    }
    return ports;
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** One free TCP port. */
export async function freePort(host = '0.0.0.0'): Promise<number> {
  const [port] = await freePorts(1, host);
  return port!;
}

/** True when nothing listens on `port` (it can be bound on all interfaces). */
export async function portIsFree(port: number, host = '0.0.0.0'): Promise<boolean> {
  try {
    await close(await listen(port, host));
    return true;
  } catch {
    return false;
  }
}

/** GETs `url` with a per-request timeout; resolves with the status, or null when nothing answered. */
export async function httpStatus(url: string, timeoutMs = 2000): Promise<number | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  } catch {
    return null;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
