/**
 * Crash safety: the service runs as a child process, is killed with SIGKILL while it is
 * appending, and restarted. The log must end with exactly one row per published event,
 * ids 1..N with no gap.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, deleteStreams, uniquePrefix, TEST_INTERNAL_AUTH_SECRET, type TestDatabase } from '@reelbase/lib-testkit';
import { eventsClient, makeEvent, NATS_URL, publisher, readAll, sqlClient, waitFor, waitForLastId, type Publisher } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TOTAL = 2000;

let db: TestDatabase;
let prefix: string;
let pub: Publisher;
const children: ChildProcess[] = [];

/** Starts `node services/events/dist/main.js`; resolves with the process and its gRPC port. */
async function startChild(): Promise<{ child: ChildProcess; grpcPort: number }> {
  const child = spawn(process.execPath, ['services/events/dist/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.url,
      NATS_URL,
      NATS_PREFIX: prefix,
      INTERNAL_AUTH_SECRET: TEST_INTERNAL_AUTH_SECRET,
      GRPC_PORT: '0',
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      EVENTS_ACK_WAIT_MS: '2000',
      EVENTS_BATCH_MAX: '64',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const lines = createInterface({ input: child.stdout! });
  const grpcPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`events did not start: ${stderr}`)), 20_000);
    child.once('exit', (code) => reject(new Error(`events exited with ${code}: ${stderr}`)));
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; grpcPort?: number };
        if (entry.msg === 'events started' && entry.grpcPort) {
          clearTimeout(timer);
          resolve(entry.grpcPort);
        }
      } catch {
        // not a log line
      }
    });
  });
  return { child, grpcPort };
}

beforeAll(async () => {
  execFileSync(process.execPath, [`${ROOT}/node_modules/typescript/bin/tsc`, '-b', 'services/events'], { cwd: ROOT, stdio: 'inherit' });
  db = await createTestDatabase();
  prefix = uniquePrefix('evcrash');
  pub = await publisher(prefix);
}, 120_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await pub?.close();
  await deleteStreams(prefix);
  await db?.drop();
});

describe('crash while appending', () => {
  it('SIGKILL mid-stream, restart: ids exactly 1..N, every event once', async () => {
    const first = await startChild();
    const client = eventsClient(first.grpcPort);
    const sent = Array.from({ length: TOTAL }, (_, i) => makeEvent({ entity_type: 'Shot', changes: { i } }));

    // Publish in the background, 50 at a time, while the writer appends.
    let published = 0;
    const publishing = (async () => {
      for (let i = 0; i < TOTAL; i += 50) {
        await Promise.all(sent.slice(i, i + 50).map((e) => pub.publish(e)));
        published = i + 50;
      }
    })();

    const atKill = await waitFor(
      async () => {
        const last = (await client.list({ limit: 1 })).lastId;
        return last >= 300 ? last : 0;
      },
      20_000,
      'the writer to get going',
    );
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    client.close();
    expect(atKill).toBeLessThan(TOTAL);
    const publishedAtKill = published;
    await publishing;

    const second = await startChild();
    const client2 = eventsClient(second.grpcPort);
    try {
      await waitForLastId(client2, TOTAL, 30_000);
      // Give redeliveries of batches that committed before the kill time to arrive (ack wait 2 s).
      await new Promise((r) => setTimeout(r, 2500));
      const all = await readAll(client2);
      expect(all.length).toBe(TOTAL);
      expect(all.map((e) => e.id)).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
      expect(new Set(all.map((e) => e.entityId))).toEqual(new Set(sent.map((e) => e.entity_id)));

      const sql = await sqlClient(db.url);
      try {
        const rows = await sql.query<{ event_id: string }>('select event_id::text as event_id from events.event_log');
        const ids = rows.map((r) => r.event_id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(new Set(ids)).toEqual(new Set(sent.map((e) => e.event_id)));
      } finally {
        await sql.close();
      }
      // For the record: the kill landed before everything was published or appended.
      expect(Math.min(atKill, publishedAtKill)).toBeLessThan(TOTAL);
    } finally {
      client2.close();
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
    expect(second.child.exitCode).toBe(0);
  }, 120_000);
});
