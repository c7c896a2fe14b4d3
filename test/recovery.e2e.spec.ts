/**
 * Crash recovery end to end: records killed right after a commit (and right after a publish)
 * still yields exactly one event per write, and the event log killed with SIGKILL in the
 * middle of a burst of writes ends gapless, with exactly one create event per record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, eventsAfter, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POSTs and returns the status, or 'socket error' when the connection broke. */
async function statusOrSocketError(fn: () => Promise<{ status: number }>): Promise<number | 'socket error'> {
  try {
    return (await fn()).status;
  } catch {
    return 'socket error';
  }
}

describe('crash recovery (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let projectId: string;

  beforeAll(async () => {
    e = await startE2EStack('recovery');
    admin = await bootstrapAdmin(e.api);
    projectId = expectStatus(await admin.api.post('/entities/Project', { data: { name: 'Crash', code: 'crash' } }), 200).id;
  });
  afterAll(async () => {
    await e?.teardown();
  });

  for (const fault of ['crash_after_commit', 'crash_after_publish'] as const) {
    it(`records killed by ${fault}: the write's event appears exactly once and the record exists`, async () => {
      const code = `c_${fault}`;
      await e.stack.restart('records', { RECORDS_FAULT: fault });
      const faulty = e.stack.pid('records');
      const outcome = await statusOrSocketError(() => admin.api.post('/entities/Shot', { project_id: projectId, data: { code } }));
      // After commit the answer never arrives; after publish it may already have been sent.
      expect(fault === 'crash_after_commit' ? [503, 'socket error'] : [200, 503, 'socket error']).toContain(outcome);
      // The process really died at the fault point (not some other way).
      const deadline = Date.now() + 10_000;
      while (e.stack.pid('records') === faulty && Date.now() < deadline) await sleep(20);
      expect(e.stack.pid('records')).not.toBe(faulty);
      // Replace it with a clean process before the supervisor restarts it with the fault still set.
      await e.stack.restart('records');

      const creates = await eventually(
        async () => {
          const found = (await eventsAfter(admin.api, 0)).filter((ev) => ev.entity_type === 'Shot' && ev.changes?.code === code);
          return found.length ? found : undefined;
        },
        30_000,
        `the event of the Shot written before the ${fault} crash`,
      );
      await sleep(1500);
      const again = (await eventsAfter(admin.api, 0)).filter((ev) => ev.entity_type === 'Shot' && ev.changes?.code === code);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ action: 'create', actor: admin.user.id, project_id: projectId });
      expect(creates[0].id).toBe(again[0].id);
      const record = expectStatus(await admin.api.get(`/entities/Shot/${again[0].entity_id}`), 200, 'the record written before the crash');
      expect(record.data.code).toBe(code);
    });
  }

  it('the event log killed with SIGKILL during a burst of 200 creates ends gapless with one create per record', async () => {
    const total = 200;
    const ids: string[] = [];
    let done = 0;
    let killed: Promise<void> | undefined;
    let doneAtKill = -1;
    let doneAtRestart = -1;
    const worker = async (w: number) => {
      for (let i = w; i < total; i += 8) {
        const res = await admin.api.post('/entities/Shot', { project_id: projectId, data: { code: `burst${i}` } });
        ids.push(expectStatus(res, 200, `burst create ${i}`).id);
        done++;
        if (done === 40 && !killed) {
          killed = (async () => {
            await e.stack.kill('events', 'SIGKILL');
            doneAtKill = done;
            await sleep(500);
            await e.stack.restart('events');
            doneAtRestart = done;
          })();
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)));
    expect(killed).toBeDefined();
    await killed;
    expect(ids).toHaveLength(total);
    // Writes kept flowing while the event log was down.
    expect(doneAtRestart - doneAtKill).toBeGreaterThan(0);

    const events = await eventually(
      async () => {
        const all = await eventsAfter(admin.api, 0);
        const burst = all.filter((ev) => ev.entity_type === 'Shot' && String(ev.changes?.code ?? '').startsWith('burst'));
        return burst.length >= total ? all : undefined;
      },
      60_000,
      'every burst create in the event log',
    );
    await sleep(1500);
    const final = await eventsAfter(admin.api, 0);
    expect(final.length).toBe(events.length);
    expect(final.map((ev) => ev.id)).toEqual(Array.from({ length: final.length }, (_, i) => i + 1));

    const createsPerEntity = new Map<string, number>();
    for (const ev of final) {
      if (ev.action !== 'create' || ev.changes?.revived) continue;
      createsPerEntity.set(ev.entity_id, (createsPerEntity.get(ev.entity_id) ?? 0) + 1);
    }
    expect([...createsPerEntity.values()].filter((n) => n !== 1)).toEqual([]);
    for (const id of ids) expect(createsPerEntity.get(id), `create event of ${id}`).toBe(1);
    // Newest first agrees with the replay.
    const newest = expectStatus(await admin.api.get('/events?limit=5'), 200).items.map((ev: any) => ev.id);
    expect(newest).toEqual([final.length, final.length - 1, final.length - 2, final.length - 3, final.length - 4]);
  });
});
