/**
 * The TypeScript client (@reelbase/client) against the whole stack: every convenience, paging
 * through 2,500 records, a create whose answer is lost and retried without a duplicate, 429s
 * waited out as Retry-After says, a 200 MB upload streamed with flat memory and progress, the
 * event follower riding out a gateway restart with no gap and no duplicate, and one client used
 * by many callers at once.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationError, Conflict, NotFound, PermissionDenied, Reelbase, ValidationError, type ReelEvent } from '@reelbase/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus } from './support/api.client.js';
import { bootstrapAdmin, createUser, eventsAfter, lastEventId, startE2EStack, type E2EStack, type Session } from './support/e2e.stack.js';
import { startFaultProxy } from './support/fault.proxy.js';

describe('TypeScript client (whole stack)', () => {
  let e: E2EStack;
  let admin: Session;
  let apiKey: string;
  let rb: Reelbase;
  let projectId: string;
  let dir: string;

  beforeAll(async () => {
    e = await startE2EStack('ts-client');
    admin = await bootstrapAdmin(e.api);
    apiKey = expectStatus(await admin.api.post('/auth/api-keys', { name: 'pipeline' }), 200).token;
    rb = new Reelbase({ url: e.stack.url, apiKey });
    projectId = (await rb.create('Project', { name: 'Client', code: 'cli' })).id;
    dir = mkdtempSync(join(tmpdir(), 'rb-ts-client-'));
  }, 180_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await e?.teardown();
  });

  it('creates, reads, updates, retires and revives; finds one; reads the schema and notes; typed errors by status', async () => {
    const seq = await rb.create('Sequence', { code: 'SQ010' }, { project_id: projectId });
    const shot = await rb.create('Shot', { code: 'SH010', sequence: { type: 'Sequence', id: seq.id } }, { project_id: projectId });
    expect(shot).toMatchObject({ entity_type: 'Shot', project_id: projectId, data: { code: 'SH010' } });
    expect((await rb.get('Shot', shot.id)).data.code).toBe('SH010');
    const found = await rb.findOne('Shot', [['sequence.Sequence.code', 'is', 'SQ010']], { fields: ['code'] });
    expect(found?.id).toBe(shot.id);
    expect(await rb.findOne('Shot', [['code', 'is', 'nope']])).toBeNull();

    const updated = await rb.update('Shot', shot.id, { cut_in: 1001 }, { ifMatch: shot.updated_at });
    expect(updated.data).toMatchObject({ code: 'SH010', cut_in: 1001 });
    const stale = await rb.update('Shot', shot.id, { cut_in: 1 }, { ifMatch: shot.updated_at }).catch((err: unknown) => err);
    expect(stale).toBeInstanceOf(Conflict);
    expect((stale as Conflict).code).toBe('stale_write');

    expect(await rb.delete('Shot', shot.id)).toMatchObject({ id: shot.id, retired: true });
    const gone = (await rb.get('Shot', shot.id).catch((err: unknown) => err)) as NotFound;
    expect(gone).toBeInstanceOf(NotFound);
    expect([gone.status, gone.code]).toEqual([404, 'not_found']);
    expect((await rb.revive('Shot', shot.id)).id).toBe(shot.id);

    const note = await rb.create('Note', { subject: 'fix the edge', links: [{ type: 'Shot', id: shot.id }] }, { project_id: projectId });
    expect((await rb.notesFor('Shot', shot.id)).map((n) => n.id)).toEqual([note.id]);
    const schema = await rb.schema();
    expect(schema.entity_types.some((t) => t.code === 'Shot')).toBe(true);

    const invalid = (await rb.create('Shot', { nonsense_field: 1 }, { project_id: projectId }).catch((err: unknown) => err)) as ValidationError;
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid.problems.map((p) => p.loc)).toContainEqual(['body', 'data', 'nonsense_field']);
    expect(await new Reelbase({ url: e.stack.url, apiKey: 'svc_wrong' }).me().catch((err: unknown) => err)).toBeInstanceOf(AuthenticationError);
    const viewer = await createUser(admin.api, 'Viewer', 'viewer@studio.test');
    const asViewer = new Reelbase({ url: e.stack.url, apiKey: viewer.token });
    expect(await asViewer.create('Shot', { code: 'SH999' }, { project_id: projectId }).catch((err: unknown) => err)).toBeInstanceOf(PermissionDenied);
    // email and password instead of a key: logs in on the first call.
    expect((await new Reelbase({ url: e.stack.url, email: 'admin@studio.test', password: 'correct horse battery' }).me()).role).toBe('Admin');
  });

  it('pages through 2,500 records created by 8 callers sharing one client: each once, in order, one create event each', async () => {
    const before = await lastEventId(admin.api);
    const codes = Array.from({ length: 2500 }, (_, i) => `P${String(i).padStart(4, '0')}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < codes.length) {
          const code = codes[next++]!;
          await rb.create('Asset', { code }, { project_id: projectId });
        }
      }),
    );
    const seen: string[] = [];
    for await (const r of rb.iterFind('Asset', [['code', 'starts_with', 'P']], {
      fields: ['code'],
      order: [{ field: 'code', direction: 'asc' }],
      pageSize: 1000,
    })) {
      seen.push(r.data.code as string);
    }
    expect(seen).toEqual(codes);
    expect((await rb.find('Asset', [['code', 'starts_with', 'P']], { limit: 1234, pageSize: 500 })).length).toBe(1234);
    const creates = await eventually(async () => {
      const evs = (await eventsAfter(admin.api, before, '&entity_type=Asset')).filter((ev) => ev.action === 'create');
      return evs.length >= 2500 ? evs : undefined;
    }, 60_000);
    expect(new Set(creates.map((ev) => ev.entity_id)).size).toBe(2500);
  }, 600_000);

  it('retries a create whose answer was cut off: the same record comes back, and only one exists', async () => {
    const proxy = await startFaultProxy(e.stack.url, { cutFirst: /^POST \/entities\/Shot / });
    try {
      const before = await lastEventId(admin.api);
      const retries: string[] = [];
      const viaProxy = new Reelbase({ url: proxy.url, apiKey, onRetry: (r) => retries.push(r.reason) });
      const shot = await viaProxy.create('Shot', { code: 'SH_RETRY' }, { project_id: projectId });
      expect(proxy.cut).toBe(1);
      expect(retries).toHaveLength(1);
      const all = await rb.find('Shot', [['code', 'is', 'SH_RETRY']]);
      expect(all.map((r) => r.id)).toEqual([shot.id]);
      await new Promise((r) => setTimeout(r, 1000));
      const events = (await eventsAfter(admin.api, before, '&entity_type=Shot')).filter((ev) => ev.action === 'create');
      expect(events.map((ev) => ev.entity_id)).toEqual([shot.id]);
    } finally {
      await proxy.close();
    }
  });

  it('batches writes all or nothing, and summarizes them grouped', async () => {
    for (const code of ['lay', 'lgt']) expectStatus(await admin.api.post('/schema/steps', { code, name: code }), 200, `step ${code}`);
    const task = (name: string, step: string, estimate: number) => ({
      request_type: 'create' as const,
      entity_type: 'Task',
      project_id: projectId,
      data: { name, step, estimate_minutes: estimate },
    });
    const results = await rb.batch([task('B1', 'lay', 60), task('B2', 'lay', 30), task('B3', 'lgt', 15)]);
    expect(results.map((r) => (r === true ? r : r.data.name))).toEqual(['B1', 'B2', 'B3']);
    const bad = (await rb.batch([task('B4', 'lay', 1), task('B5', 'nope', 1)]).catch((err: unknown) => err)) as ValidationError;
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad.problems[0]!.loc.slice(0, 3)).toEqual(['body', 'requests', 1]);
    expect(await rb.findOne('Task', [['name', 'is', 'B4']])).toBeNull();
    const sum = await rb.summarize(
      'Task',
      [
        ['project_id', 'is', projectId],
        ['name', 'starts_with', 'B'],
      ],
      [
        { field: 'estimate_minutes', type: 'sum' },
        { field: 'id', type: 'record_count' },
      ],
      { grouping: [{ field: 'step', type: 'exact' }] },
    );
    expect(sum.summaries).toEqual({ estimate_minutes: 105, id: 3 });
    expect(sum.groups?.map((g) => [g.group_value, g.summaries.estimate_minutes])).toEqual([
      ['lay', 90],
      ['lgt', 15],
    ]);
  });

  it('waits out 429s for as long as Retry-After says, then succeeds', async () => {
    const proxy = await startFaultProxy(e.stack.url, { limitFirst: 2, retryAfterSeconds: 1 });
    try {
      const delays: number[] = [];
      const viaProxy = new Reelbase({ url: proxy.url, apiKey, onRetry: (r) => delays.push(r.delayMs) });
      const started = Date.now();
      expect((await viaProxy.me()).role).toBe('Admin');
      expect(proxy.limited).toHaveLength(2);
      expect(delays).toEqual([1000, 1000]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
      // With retries off, the 429 reaches the caller as RateLimited.
      const again = await startFaultProxy(e.stack.url, { limitFirst: 1, retryAfterSeconds: 7 });
      const err = await new Reelbase({ url: again.url, apiKey, retry: { retries: 0 } })
        .me()
        .catch((x: unknown) => x as { name: string; retryAfterSeconds: number });
      await again.close();
      expect(err).toMatchObject({ name: 'RateLimited', status: 429, code: 'rate_limited', retryAfterSeconds: 7 });
    } finally {
      await proxy.close();
    }
  });

  it('uploads a 200 MB file streamed from disk with progress and flat memory, then waits for the transcode', async () => {
    const file = join(dir, 'plate.mov');
    const fd = openSync(file, 'w');
    const block = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
    for (let i = 0; i < 50; i++) writeSync(fd, block);
    closeSync(fd);
    const size = 200 * 1024 * 1024;
    const version = await rb.create('Version', { code: 'v001' }, { project_id: projectId });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const progress: number[] = [];
    const res = await rb.uploadReviewable(version.id, file, {
      progress: (sent, total) => {
        expect(total).toBe(size);
        progress.push(sent);
        peak = Math.max(peak, process.memoryUsage().rss);
      },
    });
    expect(res.status).toBe('pending');
    expect(res.representation.entity_type).toBe('Representation');
    expect(progress.at(-1)).toBe(size);
    expect(progress.length).toBeGreaterThan(100);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    // A 200 MB body held in memory would show; streaming keeps the process within a few buffers.
    expect(peak - rssBefore).toBeLessThan(80 * 1024 * 1024);
    // Not a movie: the transcode ends failed, with a reason, and waitReviewable says so.
    const st = await rb.waitReviewable(version.id, { timeoutMs: 120_000, pollMs: 500 });
    expect(st.status).toBe('failed');
    expect(st.transcode_error).toBeTruthy();
  }, 300_000);

  it('follows events across a gateway restart: no gap, no duplicate', async () => {
    const start = await rb.lastEventId();
    const stop = new AbortController();
    const got: ReelEvent[] = [];
    const errors: unknown[] = [];
    const follower = (async () => {
      for await (const ev of rb.events({
        after: start,
        entityType: 'Sequence',
        follow: true,
        pollMs: 200,
        signal: stop.signal,
        onError: (err) => errors.push(err),
      })) {
        got.push(ev);
      }
    })();
    const make = async (from: number, n: number) => {
      for (let i = from; i < from + n; i++) await rb.create('Sequence', { code: `FOLLOW${i}` }, { project_id: projectId });
    };
    await make(0, 10);
    await eventually(async () => (got.length >= 10 ? true : undefined), 20_000, 'the first 10 events');
    await e.stack.restart('gateway');
    await make(10, 10);
    await eventually(async () => (got.length >= 20 ? true : undefined), 60_000, 'all 20 events');
    await new Promise((r) => setTimeout(r, 1000));
    stop.abort();
    await follower;
    const log = await eventsAfter(admin.api, start, '&entity_type=Sequence');
    expect(got.map((ev) => ev.id)).toEqual(log.map((ev) => ev.id));
    expect(new Set(got.map((ev) => ev.id)).size).toBe(got.length);
    expect(got.map((ev) => ev.changes.code)).toEqual(Array.from({ length: 20 }, (_, i) => `FOLLOW${i}`));
  }, 180_000);
});
