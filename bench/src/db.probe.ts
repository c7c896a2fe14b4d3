/**
 * Small reads of the bench database between phases.
 */
import pg from 'pg';

async function withClient<T>(databaseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The server's version string, e.g. `15.20 (Debian 15.20-0+deb12u1)`. */
export function postgresVersion(databaseUrl: string): Promise<string> {
  return withClient(databaseUrl, async (c) => (await c.query<{ v: string }>('show server_version')).rows[0]!.v);
}

/**
 * Waits until `records.outbox` is empty (the relay has published everything) and returns
 * how long that took, or null when it was still not empty after `timeoutMs`.
 */
export function waitOutboxEmpty(databaseUrl: string, timeoutMs: number): Promise<number | null> {
  return withClient(databaseUrl, async (c) => {
    const start = Date.now();
    for (;;) {
      const n = Number((await c.query<{ n: string }>('select count(*) as n from records.outbox')).rows[0]!.n);
      if (n === 0) return Date.now() - start;
      if (Date.now() - start > timeoutMs) return null;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}
