/**
 * The notifier process (built dist/main.js) killed with SIGKILL while it delivers, then
 * started again: every event reaches every webhook, in order per webhook, and the only
 * duplicates are attempts that were in flight at the kill, and recorded retries (at-least-once;
 * the receiver de-duplicates by X-Event-Id).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '@reelbase/lib-testkit';
import { as, notifierClient, Receiver, sql, waitFor, world, type World } from './helpers.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const admin = randomUUID();
let w: World;
let receiver: Receiver;
let base: string;
let child: ChildProcess | null = null;
let grpcPort: number;
let httpPort: number;

function spawnNotifier(): ChildProcess {
  const p = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      ...w.env,
      GRPC_PORT: String(grpcPort),
      HTTP_PORT: String(httpPort),
      BIND_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WEBHOOK_CONCURRENCY: '4',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return p;
}

async function kill(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise((r) => p.once('exit', r));
  p.kill('SIGKILL');
  await gone;
}

beforeAll(async () => {
  receiver = new Receiver();
  receiver.delayMs = 3;
  base = await receiver.start();
  w = await world({ WEBHOOK_TIMEOUT_MS: '2000' });
  [grpcPort, httpPort] = (await freePorts(2, '127.0.0.1')) as [number, number];
});

afterAll(async () => {
  if (child) await kill(child);
  w.client?.close();
  await w?.close();
  await receiver?.close();
});

describe('SIGKILL mid-delivery', () => {
  it('loses nothing and keeps the order per webhook', { timeout: 120_000 }, async () => {
    child = spawnNotifier();
    const client = notifierClient(grpcPort);
    w.client = client;
    const paths = ['/k1', '/k2', '/k3'];
    for (const p of paths) {
      await waitFor(
        () =>
          client.createWebhook({ url: `${base}${p}`, kind: 'webhook', secret: 'crash-secret-0123456789', entityTypes: [], actions: [] }, as(admin, 'Admin')),
        20_000,
        'the notifier up',
      );
    }
    // The process runs at NOTIFIER_NICE (10 by default): field 19 of /proc/<pid>/stat.
    if (process.platform === 'linux') {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])).toBe(10);
    }
    const total = 160;
    for (let i = 0; i < total / 2; i++) w.log.append({ entity_type: 'Shot', changes: { code: `k${i}` } });
    // Kill while deliveries are flowing: some delivered, most not yet.
    await waitFor(() => receiver.uniqueAt('/k1').length >= 20, 20_000, 'deliveries under way');
    await kill(child);
    const atKill = paths.map((p) => receiver.uniqueAt(p).length);
    expect(Math.min(...atKill)).toBeLessThan(total / 2);
    // Writes go on while the notifier is down.
    for (let i = total / 2; i < total; i++) w.log.append({ entity_type: 'Shot', changes: { code: `k${i}` } });

    child = spawnNotifier();
    await waitFor(() => paths.every((p) => receiver.uniqueAt(p).length === total), 60_000, 'every delivery after the restart');
    const ids = w.log.events.map((e) => e.id);
    // Recorded retries (attempts > 1: a timeout under load) may repeat an event; apart from those,
    // only the attempt in flight at the kill, at most one per webhook, is sent twice.
    const retried = new Set(
      (
        await sql<{ path: string; event_id: string }>(
          w,
          "select substring(w.url from '/k[0-9]$') as path, d.event_id from notifier.delivery d join notifier.webhook w on w.id = d.webhook_id where d.attempts > 1",
        )
      ).map((r) => `${r.path} ${r.event_id}`),
    );
    for (const p of paths) {
      expect(receiver.uniqueAt(p).map((r) => Number(r.eventId))).toEqual(ids);
      const seen = new Map<string, number>();
      for (const r of receiver.all.filter((x) => x.path === p)) seen.set(r.eventId, (seen.get(r.eventId) ?? 0) + 1);
      const repeatedAtKill = [...seen].filter(([id, n]) => n > 1 && !retried.has(`${p} ${id}`));
      expect(repeatedAtKill.length, p).toBeLessThanOrEqual(1);
    }
    const rows = await sql<{ status: string; n: string }>(w, 'select status, count(*) as n from notifier.delivery group by status');
    expect(rows).toEqual([{ status: 'delivered', n: String(total * paths.length) }]);
  });
});
