/**
 * Faults, counted, short (docs/operations.md, "Faults, counted"): `bench/dist/chaos.js` with two
 * faults — records and the gateway killed with SIGKILL under the mixed load — and every target of
 * its table met: every acknowledged write found with exactly one event, the WebSocket follower and
 * the webhook saw every event in order, no upload stuck, no request hung, writes recovered.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@reelbase/lib-testkit';

describe('faults, counted (whole stack, two faults)', () => {
  it('records and the gateway killed with SIGKILL under load: every target met', async () => {
    const dir = join(REPO_ROOT, '.test-data', 'e2e', `chaos-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'rows.json');
    const child = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bench/dist/chaos.js'), '--faults', 'records,gateway', '--seconds', '8', '--json', out, '--dir', dir],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let printed = '';
    child.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    process.stdout.write(printed);
    const rows = JSON.parse(readFileSync(out, 'utf8')) as Array<
      { fault: string; writesAcked: number; pass: Record<string, boolean> } & Record<string, unknown>
    >;
    expect(rows.map((r) => r.fault)).toEqual(['records', 'gateway']);
    for (const row of rows) {
      expect(row.writesAcked, `${row.fault}: writes acknowledged`).toBeGreaterThan(0);
      expect(row.writesFound, `${row.fault}: writes found`).toBe(row.writesAcked);
      expect(row.eventsOne, `${row.fault}: one event per write`).toBe(row.writesAcked);
      expect(row.wsSeen, `${row.fault}: follower`).toBe(row.wsExpected);
      expect(row.wsDuplicates, `${row.fault}: follower saw none twice`).toBe(0);
      expect(row.hookDelivered, `${row.fault}: webhook`).toBe(row.hookExpected);
      expect(row.uploadsStuck, `${row.fault}: uploads stuck`).toBe(0);
      expect(row.hung, `${row.fault}: hung`).toBe(0);
      expect(row.pass, `${row.fault}: targets`).toEqual({
        writes: true,
        events: true,
        websocket: true,
        webhook: true,
        uploads: true,
        hung: true,
        recovered: true,
      });
    }
    expect(code).toBe(0);
    // The run's own PostgreSQL and NATS store (about 50 MB); the logs stay.
    rmSync(join(dir, 'data'), { recursive: true, force: true });
  }, 330_000);
});
