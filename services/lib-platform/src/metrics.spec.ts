import { describe, expect, it } from 'vitest';
import { Metrics, knexPoolSample, ormPoolSample } from './metrics.js';
import { Readiness } from './readiness.js';

/** The value of `name{labels}` on the registry's exposition page, or undefined when absent. */
async function sample(m: Metrics, series: string): Promise<number | undefined> {
  const text = await m.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('Metrics: operational gauges', () => {
  it('reports each watched pool by state, read at every scrape', async () => {
    const m = new Metrics('svc');
    const pool = { used: 3, free: 1, pending: 2 };
    const tarn = { numUsed: () => pool.used, numFree: () => pool.free, numPendingAcquires: () => pool.pending, max: 9 };
    m.watchPool('query', knexPoolSample({ client: { pool: tarn } }, 5));
    expect(await sample(m, 'db_pool_connections{pool="query",state="used",service="svc"}')).toBe(3);
    expect(await sample(m, 'db_pool_connections{pool="query",state="pending",service="svc"}')).toBe(2);
    expect(await sample(m, 'db_pool_connections{pool="query",state="max",service="svc"}')).toBe(5);
    pool.used = 0;
    pool.free = 4;
    pool.pending = 0;
    expect(await sample(m, 'db_pool_connections{pool="query",state="used",service="svc"}')).toBe(0);
    expect(await sample(m, 'db_pool_connections{pool="query",state="free",service="svc"}')).toBe(4);
  });

  it("samples a Knex pool (and the ORM's, through its Knex) at every scrape; nothing in use once destroyed", async () => {
    const m = new Metrics('svc');
    const state = { used: 3, free: 1, pending: 2 };
    const tarn = { numUsed: () => state.used, numFree: () => state.free, numPendingAcquires: () => state.pending, max: 8 };
    const knex: { client: { pool?: typeof tarn } } = { client: { pool: tarn } };
    m.watchPool('writes', knexPoolSample(knex, 4));
    m.watchPool('main', ormPoolSample({ em: { getConnection: () => ({ getKnex: () => knex }) } }));
    expect(await sample(m, 'db_pool_connections{pool="writes",state="used",service="svc"}')).toBe(3);
    expect(await sample(m, 'db_pool_connections{pool="writes",state="pending",service="svc"}')).toBe(2);
    expect(await sample(m, 'db_pool_connections{pool="writes",state="max",service="svc"}')).toBe(4);
    expect(await sample(m, 'db_pool_connections{pool="main",state="max",service="svc"}')).toBe(8);
    state.used = 0;
    expect(await sample(m, 'db_pool_connections{pool="main",state="used",service="svc"}')).toBe(0);
    delete knex.client.pool;
    expect(knexPoolSample(knex, 4)()).toEqual({ used: 0, free: 0, pending: 0, max: 4 });
    expect(ormPoolSample({ em: { getConnection: () => ({ getKnex: () => knex }) } })()).toEqual({ used: 0, free: 0, pending: 0, max: 0 });
  });

  it('reports readiness per check and as a whole, evaluated at every scrape', async () => {
    const m = new Metrics('svc');
    let dbUp = true;
    m.watchReadiness(
      new Readiness(200)
        .add('postgres', async () => {
          if (!dbUp) throw new Error('down');
        })
        .add('nats', async () => undefined),
    );
    expect(await sample(m, 'service_ready{service="svc"}')).toBe(1);
    dbUp = false;
    expect(await sample(m, 'service_ready{service="svc"}')).toBe(0);
    expect(await sample(m, 'readiness_check_up{check="postgres",service="svc"}')).toBe(0);
    expect(await sample(m, 'readiness_check_up{check="nats",service="svc"}')).toBe(1);
  });

  it('follows a NATS connection through disconnects and reconnects', async () => {
    const m = new Metrics('svc');
    const queue: { type: string }[] = [];
    let wake: (() => void) | undefined;
    let closed = false;
    const nc = {
      isClosed: () => closed,
      async *status() {
        for (;;) {
          while (queue.length) yield queue.shift()!;
          if (closed) return;
          await new Promise<void>((r) => (wake = r));
        }
      },
    };
    const push = async (type: string) => {
      queue.push({ type });
      wake?.();
      await new Promise((r) => setImmediate(r));
    };
    m.watchNats(nc);
    expect(await sample(m, 'nats_connected{service="svc"}')).toBe(1);
    await push('disconnect');
    expect(await sample(m, 'nats_connected{service="svc"}')).toBe(0);
    await push('reconnect');
    expect(await sample(m, 'nats_connected{service="svc"}')).toBe(1);
    closed = true;
    await push('close');
    expect(await sample(m, 'nats_connected{service="svc"}')).toBe(0);
  });

  it('sets a collected gauge at scrape time', async () => {
    const m = new Metrics('svc');
    let n = 3;
    m.collectedGauge('things', 'things', [], (g) => g.set(n));
    expect(await sample(m, 'things{service="svc"}')).toBe(3);
    n = 7;
    expect(await sample(m, 'things{service="svc"}')).toBe(7);
  });
});
