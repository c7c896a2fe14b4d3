/**
 * At-least-once without double work and without reviewables left `pending`: a worker killed
 * with SIGKILL mid-transcode (its job is redelivered after the ack wait and ends done, with the
 * attempts counted right); a job whose publish failed (the stream was gone) is published by the
 * sweeper; the object store going down during an upload answers `unavailable` quickly and
 * leaves nothing behind.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from 'minio';
import { AppError, newId, newMediaPrefix } from '@reelbase/lib-platform';
import { artist, clips, startWorld, upload, waitFinished, type World } from './helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('media-transcode: recovery', () => {
  let w: World;

  beforeAll(async () => {
    w = await startWorld({ TRANSCODE_ACK_WAIT_MS: '1500', RPC_DEADLINE_MS: '1000' });
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  it('redelivers the job of a worker killed mid-transcode; it ends done with 2 attempts', async () => {
    const c = clips(w.ff, w.dir);
    // Real-time proxy encoding: the 6 s clip keeps the first worker busy long enough to kill it.
    const child = w.spawnWorker({ TRANSCODE_FAULT: 'slow_proxy' });
    const versionId = w.records.addVersion();
    const res = await upload(w, versionId, c.long(6));
    const repId = res.representation!.id;
    // The thumbnail is out: the worker is encoding the proxy.
    await until('the thumbnail of the first attempt', () => w.records.data(repId).thumbnail_media_key);
    expect(w.records.data(repId).transcode_status).toBe('processing');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const killedAt = Date.now();
    await w.startWorker();
    const done = await waitFinished(w, versionId, 90_000);
    expect(done.status).toBe('done');
    expect(done.attempts).toBe(2);
    // Redelivered after the ack wait, not before (the dead worker's lease had to lapse too).
    expect(Date.now() - killedAt).toBeGreaterThan(1000);
    const job = await w.api.jobs.latestForVersion(versionId);
    // The attempt is closed right after the record says done.
    let attempts = await w.api.jobs.listAttempts(job!.id);
    for (let i = 0; i < 100 && attempts.at(-1)?.outcome !== 'done'; i++) {
      await sleep(50);
      attempts = await w.api.jobs.listAttempts(job!.id);
    }
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, null],
      [2, 'done'],
    ]);
    const statuses = w.records.updates.filter((u) => u.id === repId && u.data.transcode_status).map((u) => u.data.transcode_status);
    expect(statuses).toEqual(['processing', 'processing', 'done']);
  }, 180_000);

  it('a job done whose Representation copy could not be sent gets the copy again from the job row, not a second transcode', async () => {
    // The job row owns the state (docs/media.md, "Who owns the transcode state"): records refusing the
    // `done` copy once leaves the row done; the redelivery sends the copy from it.
    let refused = 0;
    w.records.refuseUpdate = (patch) => patch.transcode_status === 'done' && refused++ === 0;
    try {
      const versionId = w.records.addVersion();
      const res = await upload(w, versionId, clips(w.ff, w.dir).still(), { contentType: 'image/png' });
      const repId = res.representation!.id;
      const done = await waitFinished(w, versionId, 60_000);
      expect(done.status).toBe('done');
      expect(done.attempts).toBe(1);
      expect(refused).toBe(2);
      const job = await w.api.jobs.latestForVersion(versionId);
      expect(job!.state).toBe('done');
      expect(job!.outputs).toEqual({ reviewKind: 'image', proxyKey: done.reviewMediaKey, thumbnailKey: done.thumbnailMediaKey });
      expect((w.records.data(repId).files as { proxy: { key: string } }).proxy.key).toBe(done.reviewMediaKey);
      expect(w.records.records.get(versionId)!.thumbnailId).toBe(repId);
      // One conversion: the redelivery only copied the row.
      const statuses = w.records.updates.filter((u) => u.id === repId && u.data.transcode_status).map((u) => u.data.transcode_status);
      expect(statuses).toEqual(['processing', 'done']);
    } finally {
      w.records.refuseUpdate = undefined;
    }
  }, 120_000);

  it('publishes later a job whose publish failed, so it does not stay pending', async () => {
    const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    // The stream is gone (a NATS outage lost it): the upload still answers, the job waits in the table.
    for (const worker of w.workers.splice(0)) await worker.stop();
    await jsm.streams.delete(`${w.prefix}TRANSCODE`);
    const versionId = w.records.addVersion();
    const res = await upload(w, versionId, clips(w.ff, w.dir).still(), { contentType: 'image/png' });
    expect(res.status).toBe('pending');
    const job = await w.api.jobs.latestForVersion(versionId);
    expect(job!.publishedAt).toBeNull();
    // A worker starting re-creates the stream; the sweeper publishes the job.
    await w.startWorker();
    // The sweeper finds the Representation and queues the job.
    const queuedBy = Date.now() + 30_000;
    while (!(await w.api.jobs.latestForVersion(versionId)) && Date.now() < queuedBy) await sleep(100);
    const done = await waitFinished(w, versionId, 60_000);
    expect(done.status).toBe('done');
    expect((await w.api.jobs.get(job!.id))!.publishedAt).not.toBeNull();
    await nc.close();
  }, 120_000);

  it('finishes uploads whose api stopped before queueing the job: queued when the Representation exists, removed when not', async () => {
    const store = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(w.s3.endpoint).port),
      useSSL: false,
      accessKey: w.s3.accessKey,
      secretKey: w.s3.secretKey,
      region: w.s3.region,
      pathStyle: true,
    });
    const png = readFileSync(clips(w.ff, w.dir).still());
    // 1. The api stopped right after records created the Representation.
    const versionId = w.records.addVersion();
    const key = `${newMediaPrefix()}/original.png`;
    await store.putObject(w.s3.bucket, key, png, png.length, { 'Content-Type': 'image/png' });
    const jobId = newId();
    await w.api.jobs.reserve({
      id: jobId,
      versionId,
      projectId: null,
      originalKey: key,
      originalSize: png.length,
      contentType: 'image/png',
      fileName: 'still.png',
    });
    const repId = newId();
    const now = new Date().toISOString();
    w.records.put({
      id: repId,
      entityType: 'Representation',
      active: true,
      createdAt: now,
      updatedAt: now,
      dataJson: JSON.stringify({ version: { type: 'Version', id: versionId }, files: { original: { key } }, transcode_status: 'pending', attempts: 0 }),
    });
    // 2. The api stopped before records created anything.
    const orphanVersion = w.records.addVersion();
    const orphanKey = `${newMediaPrefix()}/original.png`;
    await store.putObject(w.s3.bucket, orphanKey, png, png.length, { 'Content-Type': 'image/png' });
    const orphanJob = newId();
    await w.api.jobs.reserve({
      id: orphanJob,
      versionId: orphanVersion,
      projectId: null,
      originalKey: orphanKey,
      originalSize: png.length,
      contentType: 'image/png',
      fileName: 'lost.png',
    });

    // A reservation is left alone while its upload may still be running.
    expect(await w.api.recovery.recoverOnce()).toEqual({ attached: 0, dropped: 0 });
    // The sweeper finds the Representation and queues the job.
    const queuedBy = Date.now() + 30_000;
    while (!(await w.api.jobs.latestForVersion(versionId)) && Date.now() < queuedBy) await sleep(100);
    const done = await waitFinished(w, versionId, 60_000);
    expect(done.status).toBe('done');
    expect(done.representationId).toBe(repId);
    const deadline = Date.now() + 30_000;
    while ((await w.api.jobs.get(orphanJob)) && Date.now() < deadline) await sleep(100);
    expect(await w.api.jobs.get(orphanJob)).toBeUndefined();
    const gone = await store.statObject(w.s3.bucket, orphanKey).catch((e: { code?: string }) => e.code);
    expect(gone).toBe('NotFound');
  }, 90_000);

  it('answers unavailable quickly when the object store goes down during an upload, and leaves nothing behind', async () => {
    const versionId = w.records.addVersion();
    const creates = w.records.creates.length;
    const call = w.client.clientStream('uploadReviewable', artist);
    await call.write({ payload: { $case: 'header', value: { versionId, fileName: 'take.mov', contentType: 'video/quicktime', declaredSize: 0 } } });
    await call.write({ payload: { $case: 'chunk', value: Buffer.alloc(1024 * 1024, 1) } });
    await sleep(300);
    await w.s3.stop();
    const started = Date.now();
    const err = await (async () => {
      for (let i = 0; i < 16; i++) await call.write({ payload: { $case: 'chunk', value: Buffer.alloc(1024 * 1024, 2) } });
      return call.end();
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).kind).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(8000);
    expect(w.records.creates.length).toBe(creates);
    expect(await w.api.jobs.latestForVersion(versionId)).toBeUndefined();

    // With the store down from the start: the same, at once.
    const v2 = w.records.addVersion();
    const t2 = Date.now();
    const err2 = await upload(w, v2, clips(w.ff, w.dir).still(), { contentType: 'image/png' }).catch((e: unknown) => e);
    expect((err2 as AppError).kind).toBe('unavailable');
    expect(Date.now() - t2).toBeLessThan(8000);
    expect(w.records.creates.length).toBe(creates);

    // A store that accepts connections and never answers: unavailable after S3_TIMEOUT_MS (4 s here), not a hang.
    const sockets: Socket[] = [];
    const blackHole = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackHole.listen(Number(new URL(w.s3.endpoint).port), '127.0.0.1', resolve));
    try {
      const v3 = w.records.addVersion();
      const t3 = Date.now();
      const err3 = await upload(w, v3, clips(w.ff, w.dir).still(), { contentType: 'image/png' }).catch((e: unknown) => e);
      expect((err3 as AppError).kind).toBe('unavailable');
      expect(Date.now() - t3).toBeLessThan(9000);
      expect(w.records.creates.length).toBe(creates);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => blackHole.close(resolve));
    }
  }, 90_000);
});

describe('media-transcode: a finished job whose copy and message were both lost', () => {
  let w: World;

  beforeAll(async () => {
    // A finished job whose copy is behind is published again once it is STALE_JOB_MS old.
    w = await startWorld({ STALE_JOB_MS: '1000' });
    await w.startWorker();
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  it('the sweeper publishes a done job whose copy was never sent again; the worker only sends the copy', async () => {
    // The `done` copy is refused until the job's message is gone (records down, then the stream lost).
    let refused = 0;
    let allow = false;
    w.records.refuseUpdate = (patch) => {
      if (patch.transcode_status !== 'done' || allow) return false;
      refused++;
      return true;
    };
    const nc = await connect({ servers: 'nats://127.0.0.1:4222' });
    try {
      const versionId = w.records.addVersion();
      const res = await upload(w, versionId, clips(w.ff, w.dir).still(), { contentType: 'image/png' });
      const repId = res.representation!.id;
      // The job row is done; its copy was refused.
      await until('the refused done copy', () => refused > 0);
      const job = await w.api.jobs.latestForVersion(versionId);
      expect(job!.state).toBe('done');
      // The message is lost: the worker stops and the stream goes with it.
      for (const worker of w.workers.splice(0)) await worker.stop();
      await (await jetstreamManager(nc)).streams.delete(`${w.prefix}TRANSCODE`);
      expect(w.records.data(repId).transcode_status).toBe('processing');
      allow = true;
      // A worker starting re-creates the stream; only the sweeper can bring the copy now.
      await w.startWorker();
      await until('the done copy', () => w.records.data(repId).transcode_status === 'done', 30_000);
      expect(w.records.data(repId).review_media_key).toBe(job!.outputs!.proxyKey);
      // The Version's thumbnail is a second write, right after the Representation's copy.
      await until('the thumbnail', () => w.records.records.get(versionId)!.thumbnailId === repId, 10_000);
      // One conversion: the republished job only copied the row.
      expect((await w.api.jobs.listAttempts(job!.id)).length).toBe(1);
      const statuses = w.records.updates.filter((u) => u.id === repId && u.data.transcode_status).map((u) => u.data.transcode_status);
      expect(statuses).toEqual(['processing', 'done']);
      // The copy is marked on the row: the sweeper leaves the job from now on.
      const before = w.records.updates.length;
      await sleep(2500);
      expect(w.records.updates.length).toBe(before);
    } finally {
      w.records.refuseUpdate = undefined;
      await nc.close();
    }
  }, 120_000);
});
