/**
 * `npm run bench:notifier -- [--webhooks 100] [--events 1000] [--writers 16] [--concurrency <n>] [--timeout 900]`:
 * webhook delivery at scale, in one run against one stack (docs/notifier.md, "Benchmark").
 *
 *   1. The whole stack (`startStack`, every service its own process) with the notifier allowed
 *      to reach 127.0.0.1, and a local receiver (lib-testkit's webhook receiver, bodies parsed,
 *      not kept) behind `--webhooks` signed webhooks on Shot events.
 *   2. A burst of `--events` Shot creates through the gateway (`--writers` clients at once, as
 *      fast as they go): `webhooks × events` deliveries, 100,000 by default.
 *   3. Waits until every (webhook, event) pair has arrived, then reports deliveries/s (from the
 *      first write sent to the last delivery received) and the write → delivery latency of each
 *      pair (from the moment its write was sent to the moment the receiver had it), p50/p99/max;
 *      duplicates seen (at-least-once) and whether every webhook received its events in order.
 *   4. The raw ceiling, measured in the same run: the same number of signed POSTs of an event body
 *      sent straight to the same receiver from this process (a keep-alive agent, as many requests
 *      in flight as the notifier may have), so the notifier's rate is also given as a ratio of
 *      what the receiver and this machine can take at all.
 * Prints a table and writes JSON to bench/results/.
 */
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createTestDatabase, deleteStreams, startWebhookReceiver, type Stack, type WebhookReceiver } from '@reelbase/lib-testkit';
import { bootstrapGateway } from './gateway.bootstrap.js';
import { summarize, type LatencySummary } from './stats.js';
import { startBenchStack } from './bench.stack.js';

const RESULTS_DIR = fileURLToPath(new URL('../results/', import.meta.url));
const log = (msg: string): void => void process.stderr.write(`[bench:notifier] ${msg}\n`);
const SECRET = 'bench-webhook-secret-0123456789abcdef';
/** The notifier's own default of WEBHOOK_CONCURRENCY (services/notifier/src/config.ts). */
const SERVICE_DEFAULT_CONCURRENCY = 16;

interface Options {
  webhooks: number;
  events: number;
  writers: number;
  /** WEBHOOK_CONCURRENCY; undefined = the service's default. */
  concurrency: number | undefined;
  timeoutSeconds: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      webhooks: { type: 'string', default: '100' },
      events: { type: 'string', default: '1000' },
      writers: { type: 'string', default: '16' },
      concurrency: { type: 'string' },
      timeout: { type: 'string', default: '900' },
    },
  });
  const int = (name: string, raw: string | undefined): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} needs a positive integer, got ${raw}`);
    return n;
  };
  return {
    webhooks: int('webhooks', values.webhooks),
    events: int('events', values.events),
    writers: int('writers', values.writers),
    concurrency: values.concurrency === undefined ? undefined : int('concurrency', values.concurrency),
    timeoutSeconds: int('timeout', values.timeout),
  };
}

async function post(url: string, token: string, body: unknown): Promise<{ id: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as { id: string };
}

/** `n` signed POSTs of `body` to `url`, `inFlight` at a time, over one keep-alive agent; requests per second. */
async function rawCeiling(url: string, n: number, inFlight: number, body: string): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const headers = {
    'content-type': 'application/json',
    'x-event-id': '1',
    'x-signature': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
    'user-agent': 'reelbase-bench',
  };
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`raw POST answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) {
        next++;
        await one();
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return n / seconds;
}

async function main(): Promise<number> {
  const opts = options();
  const expected = opts.webhooks * opts.events;
  const dir = await mkdtemp(join(tmpdir(), 'reelbase-bench-notifier-'));
  const db = await createTestDatabase(undefined, 'rb_bench');
  const natsPrefix = `benchnt_${Date.now().toString(36)}_`;
  let stack: Stack | undefined;
  let rx: WebhookReceiver | undefined;

  // Per (webhook, event): the first arrival. Per event: the write's send time, by the Shot's code.
  const sentAt = new Map<string, number>();
  const firstArrival = new Map<string, number>();
  const latencies: number[] = [];
  let duplicates = 0;
  let orderViolations = 0;
  let unsigned = 0;
  const lastIdOf = new Map<string, number>();
  let firstDelivery = Infinity;
  let lastDelivery = 0;

  try {
    rx = await startWebhookReceiver({
      onRequest: (req, raw) => {
        // The raw-ceiling requests (one repeated id) are not deliveries.
        if (req.answered !== 200 || req.path === 'raw') return;
        const key = `${req.path}:${req.eventId}`;
        if (firstArrival.has(key)) {
          duplicates++;
          return;
        }
        firstArrival.set(key, req.at);
        firstDelivery = Math.min(firstDelivery, req.at);
        lastDelivery = Math.max(lastDelivery, req.at);
        if (typeof req.headers['x-signature'] !== 'string') unsigned++;
        const prev = lastIdOf.get(req.path) ?? 0;
        if (req.eventId <= prev) orderViolations++;
        lastIdOf.set(req.path, req.eventId);
        const code = (JSON.parse(raw) as { changes?: { code?: unknown } }).changes?.code;
        const sent = typeof code === 'string' ? sentAt.get(code) : undefined;
        if (sent !== undefined) latencies.push(req.at - sent);
      },
    });
    log(`starting the stack (logs in ${join(dir, 'logs')})`);
    stack = await startBenchStack({
      databaseUrl: db.url,
      natsPrefix,
      logDir: join(dir, 'logs'),
      serviceEnv: {
        notifier: {
          WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
          ...(opts.concurrency !== undefined ? { WEBHOOK_CONCURRENCY: String(opts.concurrency) } : {}),
        },
      },
      log,
    });
    if (!stack.services.includes('notifier')) throw new Error('the notifier is not built (services/notifier/dist/main.js)');
    const fx = await bootstrapGateway(stack.url);
    for (let i = 0; i < opts.webhooks; i++) {
      await post(`${stack.url}/webhooks`, fx.apiKey, { url: rx.target(`w${i}`), kind: 'webhook', secret: SECRET, entity_types: ['Shot'], actions: ['create'] });
    }
    log(`${opts.webhooks} webhooks; burst of ${opts.events} Shot creates with ${opts.writers} writers`);

    // The burst: every write timed from the moment it is sent.
    const t0 = Date.now();
    let next = 0;
    const writeMs: number[] = [];
    await Promise.all(
      Array.from({ length: opts.writers }, async () => {
        while (next < opts.events) {
          const i = next++;
          const code = `nb${i}`;
          const sent = Date.now();
          // Keyed by the Shot code, which the event's changes carry: a delivery may arrive before the write's answer.
          sentAt.set(code, sent);
          await post(`${stack!.url}/entities/Shot`, fx.apiKey, { project_id: fx.projectId, data: { code } });
          writeMs.push(Date.now() - sent);
        }
      }),
    );
    const burstMs = Date.now() - t0;
    log(`burst written in ${burstMs} ms (${((opts.events / burstMs) * 1000).toFixed(0)} writes/s); waiting for ${expected} deliveries`);

    const deadline = Date.now() + opts.timeoutSeconds * 1000;
    let reported = 0;
    while (firstArrival.size < expected) {
      if (Date.now() > deadline) throw new Error(`only ${firstArrival.size} of ${expected} deliveries arrived within ${opts.timeoutSeconds} s`);
      if (Date.now() - reported > 10_000) {
        reported = Date.now();
        log(`${firstArrival.size} / ${expected} delivered`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const totalSeconds = (lastDelivery - t0) / 1000;
    const drainSeconds = (lastDelivery - firstDelivery) / 1000;
    const deliveriesPerSec = expected / totalSeconds;
    const e2e: LatencySummary = summarize(latencies);
    const writes: LatencySummary = summarize(writeMs);

    const inFlight = opts.concurrency ?? SERVICE_DEFAULT_CONCURRENCY;
    const sampleBody = JSON.stringify({
      id: 1,
      entity_type: 'Shot',
      entity_id: crypto.randomUUID(),
      project_id: fx.projectId,
      action: 'create',
      actor: fx.userId,
      changes: { code: 'nb0', project_id: fx.projectId, active: true, status: null },
      created_at: new Date().toISOString(),
    });
    const rawN = Math.min(expected, 50_000);
    log(`raw ceiling: ${rawN} signed POSTs straight to the receiver, ${inFlight} in flight`);
    const rawPerSec = await rawCeiling(rx.target('raw'), rawN, inFlight, sampleBody);

    const report = {
      at: new Date().toISOString(),
      webhooks: opts.webhooks,
      events: opts.events,
      deliveries: expected,
      writers: opts.writers,
      webhook_concurrency: inFlight,
      burst: { ms: burstMs, writes_per_sec: Math.round((opts.events / burstMs) * 1000), write_latency_ms: writes },
      deliveries_per_sec: Math.round(deliveriesPerSec),
      drain_deliveries_per_sec: Math.round(expected / drainSeconds),
      seconds_first_write_to_last_delivery: Number(totalSeconds.toFixed(2)),
      write_to_delivery_ms: e2e,
      duplicates,
      order_violations: orderViolations,
      unsigned,
      raw_receiver_posts_per_sec: Math.round(rawPerSec),
      ratio_to_raw: Number((deliveriesPerSec / rawPerSec).toFixed(3)),
    };
    const ms = (x: number) => `${x.toFixed(0)} ms`;
    process.stdout.write(
      [
        `${opts.webhooks} webhooks × ${opts.events} Shot creates = ${expected} deliveries to a local receiver (WEBHOOK_CONCURRENCY ${inFlight}):`,
        `  burst          ${opts.events} writes in ${burstMs} ms (${report.burst.writes_per_sec} writes/s, write p99 ${ms(writes.p99)})`,
        `  delivered      ${expected} in ${totalSeconds.toFixed(1)} s from the first write: ${report.deliveries_per_sec} deliveries/s` +
          ` (${report.drain_deliveries_per_sec}/s from the first delivery to the last)`,
        `  write → delivery  p50 ${ms(e2e.p50)}  p99 ${ms(e2e.p99)}  max ${ms(e2e.max)}  (${e2e.count} pairs)`,
        `  duplicates ${duplicates}, out-of-order ${orderViolations}, unsigned ${unsigned}`,
        `  raw ceiling    ${report.raw_receiver_posts_per_sec} signed POSTs/s straight to the receiver → notifier at ${report.ratio_to_raw}× raw`,
        '',
      ].join('\n'),
    );
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, `notifier-${report.at.replace(/[:.]/g, '-')}.json`), `${JSON.stringify(report, null, 2)}\n`);
    return orderViolations === 0 && unsigned === 0 ? 0 : 1;
  } finally {
    await stack?.stop();
    await rx?.close();
    await deleteStreams(natsPrefix).catch(() => {});
    await db.drop().catch(() => {});
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:notifier failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
