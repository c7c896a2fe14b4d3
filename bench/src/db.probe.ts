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

/** Where the write path stands: records written, outbox rows waiting, last event logged. */
export function pipelineState(databaseUrl: string): Promise<string> {
  return withClient(databaseUrl, async (c) => {
    const r = await c.query<{ records: string; outbox: string; last_event: string | null }>(
      `select (select count(*) from records.record) as records, (select count(*) from records.outbox) as outbox,
              (select max(id) from events.event_log) as last_event`,
    );
    const row = r.rows[0]!;
    return `records ${row.records}, outbox rows waiting ${row.outbox}, last event-log id ${row.last_event ?? 'none'}`;
  });
}
