/**
 * Uploads that must end `done` with outputs as contracted (docs/media.md, "Outputs"), each
 * checked with ffprobe: a video with sound, one without (a silent track is added), odd
 * dimensions (made even), a 4K source (proxy 1920 wide), a still image (JPEG proxy), and an
 * upload of unknown size in small pieces. Also: the thumbnail is set before `done`, every state
 * change is a record update, the Version's thumbnail_id points at the Representation, and media
 * reads serve exactly the stored bytes (ranges, unknown and malformed keys).
 */
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, newId, newMediaPrefix } from '@reelbase/lib-platform';
import { Client } from 'minio';
import { artist, clips, probe, readMedia, saveTo, startWorld, upload, waitFinished, type World } from './helpers.js';

describe('media-transcode: reviewables that end done', () => {
  let w: World;
  let c: ReturnType<typeof clips>;

  beforeAll(async () => {
    w = await startWorld();
    await w.startWorker();
    c = clips(w.ff, w.dir);
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  /** Uploads, waits for done, fetches the proxy and thumbnail and probes them. */
  async function transcode(file: string, contentType: string, opts: { chunkBytes?: number; declared?: boolean } = {}) {
    const versionId = w.records.addVersion();
    const res = await upload(w, versionId, file, { contentType, ...opts });
    expect(res.status).toBe('pending');
    expect(JSON.parse(res.representation!.dataJson)).toMatchObject({ transcode_status: 'pending', version: { type: 'Version', id: versionId } });
    expect(res.representation!.createdBy).toBe(artist.principal!.userId);
    const done = await waitFinished(w, versionId);
    expect(done.transcodeError).toBeUndefined();
    expect(done.status).toBe('done');
    expect(done.attempts).toBe(1);
    expect(done.representationId).toBe(res.representation!.id);
    const proxy = await readMedia(w, done.reviewMediaKey!);
    const thumb = await readMedia(w, done.thumbnailMediaKey!);
    const proxyFile = saveTo(w.dir, `${done.representationId}-${done.reviewMediaKey!.split('/').pop()}`, proxy.body);
    const thumbFile = saveTo(w.dir, `${done.representationId}-thumb.jpg`, thumb.body);
    return { versionId, done, proxy, thumb, proxyInfo: probe(w.ff, proxyFile), thumbInfo: probe(w.ff, thumbFile), representationId: res.representation!.id };
  }

  function expectVideoProxy(p: ReturnType<typeof probe>, body: Buffer, maxWidth = 1920) {
    const v = p.streams.find((s) => s.codec_type === 'video')!;
    const a = p.streams.find((s) => s.codec_type === 'audio');
    expect(v.codec_name).toBe('h264');
    expect(v.pix_fmt).toBe('yuv420p');
    expect(v.width! % 2).toBe(0);
    expect(v.height! % 2).toBe(0);
    expect(v.width!).toBeLessThanOrEqual(maxWidth);
    expect(a?.codec_name).toBe('aac');
    expect(p.format.format_name).toContain('mp4');
    // faststart: the index (moov) comes before the media data (mdat).
    expect(body.indexOf('moov')).toBeGreaterThan(0);
    expect(body.indexOf('moov')).toBeLessThan(body.indexOf('mdat'));
    return v;
  }

  function expectJpeg(p: ReturnType<typeof probe>, maxWidth: number) {
    const v = p.streams[0]!;
    expect(v.codec_name).toBe('mjpeg');
    expect(v.width!).toBeLessThanOrEqual(maxWidth);
    return v;
  }

  it('a video with sound: H.264/AAC proxy, thumbnail first, thumbnail_id on the Version', async () => {
    const r = await transcode(c.withAudio(), 'video/mp4');
    expect(r.done.reviewKind).toBe('video');
    expect(r.done.reviewMediaKey).toMatch(/^rv\/[0-9a-f]{32}\/proxy\.mp4$/);
    expect(r.done.thumbnailMediaKey).toMatch(/^rv\/[0-9a-f]{32}\/thumb\.jpg$/);
    const v = expectVideoProxy(r.proxyInfo, r.proxy.body);
    expect([v.width, v.height]).toEqual([320, 240]);
    expect(r.proxy.info.contentType).toBe('video/mp4');
    expectJpeg(r.thumbInfo, 640);
    expect(r.thumb.info.contentType).toBe('image/jpeg');

    // Each state change is one update of the Representation, in order; the thumbnail comes before done.
    const changes = w.records.updates.filter((u) => u.id === r.representationId).map((u) => u.data);
    const statuses = changes.map((d) => d.transcode_status).filter(Boolean);
    expect(statuses).toEqual(['processing', 'done']);
    const thumbAt = changes.findIndex((d) => d.thumbnail_media_key === r.done.thumbnailMediaKey);
    const doneAt = changes.findIndex((d) => d.transcode_status === 'done');
    expect(thumbAt).toBeGreaterThan(-1);
    expect(thumbAt).toBeLessThan(doneAt);
    expect(w.records.records.get(r.versionId)!.thumbnailId).toBe(r.representationId);
    const files = w.records.data(r.representationId).files as Record<string, { key: string }>;
    expect(files.original!.key).toMatch(/^rv\/[0-9a-f]{32}\/original\.mp4$/);
    expect(files.proxy!.key).toBe(r.done.reviewMediaKey);
    // Every object has 128 random bits of its own: no key is derivable from another.
    const prefixes = [files.original!.key, r.done.reviewMediaKey!, r.done.thumbnailMediaKey!].map((k) => k.split('/')[1]);
    expect(new Set(prefixes).size).toBe(3);
    const guessed = `rv/${r.done.reviewMediaKey!.split('/')[1]}/original.mp4`;
    await expect(readMedia(w, guessed)).rejects.toMatchObject({ kind: 'not_found' });
    // The job keeps its outputs: what guests are served (FinishedOutputs), not the record's fields.
    const { outputs } = await w.client.call.finishedOutputs({ versionIds: [r.versionId] }, artist);
    expect(outputs).toEqual([{ versionId: r.versionId, reviewKind: 'video', proxyKey: r.done.reviewMediaKey, thumbnailKey: r.done.thumbnailMediaKey }]);
  });

  it("FinishedOutputs answers each version's newest done job; jobs done before outputs were kept find theirs beside the original", async () => {
    const store = new Client({
      endPoint: '127.0.0.1',
      port: Number(new URL(w.s3.endpoint).port),
      useSSL: false,
      accessKey: w.s3.accessKey,
      secretKey: w.s3.secretKey,
      region: w.s3.region,
      pathStyle: true,
    });
    /** A job finished the way jobs were before they kept outputs: everything under the original's prefix. */
    const legacyJob = async (versionId: string, outputs: string[]) => {
      const prefix = newMediaPrefix();
      const jobId = newId();
      await w.api.jobs.reserve({
        id: jobId,
        versionId,
        projectId: null,
        originalKey: `${prefix}/original.png`,
        originalSize: 1,
        contentType: 'image/png',
        fileName: 'x.png',
      });
      await w.api.jobs.attach(jobId, newId());
      await w.api.jobs.finish(jobId, 'done');
      for (const name of outputs) await store.putObject(w.s3.bucket, `${prefix}/${name}`, Buffer.from(name), name.length, { 'Content-Type': 'image/jpeg' });
      return prefix;
    };
    const a = w.records.addVersion();
    const older = await legacyJob(a, ['thumb.jpg', 'proxy.mp4']);
    await new Promise((r) => setTimeout(r, 5));
    const newer = await legacyJob(a, ['thumb.jpg', 'proxy.jpg']);
    const b = w.records.addVersion();
    await legacyJob(b, []); // its outputs are gone: nothing to show
    const none = w.records.addVersion();
    const { outputs } = await w.client.call.finishedOutputs({ versionIds: [a, b, none, 'not-a-uuid'] }, artist);
    expect(outputs).toEqual([{ versionId: a, reviewKind: 'image', proxyKey: `${newer}/proxy.jpg`, thumbnailKey: `${newer}/thumb.jpg` }]);
    expect(older).not.toBe(newer);
    // Found once, then kept on the job.
    const [kept] = await w.api.jobs.newestDone([a]);
    expect(kept!.outputs).toEqual({ reviewKind: 'image', proxyKey: `${newer}/proxy.jpg`, thumbnailKey: `${newer}/thumb.jpg` });
  });

  it('a video without sound gets a silent AAC track', async () => {
    const r = await transcode(c.noAudio(), 'video/quicktime');
    expectVideoProxy(r.proxyInfo, r.proxy.body);
  });

  it('odd dimensions become even', async () => {
    const r = await transcode(c.oddSize(), 'video/x-matroska');
    const v = expectVideoProxy(r.proxyInfo, r.proxy.body);
    expect([v.width, v.height]).toEqual([320, 240]);
  });

  it('a 4K source gives a 1920-wide proxy', async () => {
    const r = await transcode(c.uhd(), 'video/mp4');
    const v = expectVideoProxy(r.proxyInfo, r.proxy.body);
    expect([v.width, v.height]).toEqual([1920, 1080]);
    expect(expectJpeg(r.thumbInfo, 640).width).toBe(640);
  });

  it('a still image gives a JPEG thumbnail and a web-size JPEG proxy', async () => {
    const r = await transcode(c.still(), 'image/png');
    expect(r.done.reviewKind).toBe('image');
    expect(r.done.reviewMediaKey).toMatch(/\/proxy\.jpg$/);
    expect(expectJpeg(r.proxyInfo, 2048).width).toBe(800);
    expect(expectJpeg(r.thumbInfo, 640).width).toBe(640);
  });

  it('an upload of unknown size in small, uneven pieces is stored byte for byte', async () => {
    const file = c.withAudio();
    const r = await transcode(file, 'video/mp4', { chunkBytes: 7_777 });
    const files = w.records.data(r.representationId).files as Record<string, { key: string; size: number }>;
    const original = await readMedia(w, files.original!.key);
    const { readFileSync } = await import('node:fs');
    expect(original.body.equals(readFileSync(file))).toBe(true);
    expect(original.info.size).toBe(files.original!.size);
  });

  it('streams a 24 MiB upload under back-pressure into the store byte for byte', async () => {
    const { randomBytes } = await import('node:crypto');
    const body = randomBytes(24 * 1024 * 1024);
    const file = saveTo(w.dir, 'large.bin', body);
    const versionId = w.records.addVersion();
    const res = await upload(w, versionId, file, { contentType: 'application/octet-stream', chunkBytes: 256 * 1024 });
    const files = JSON.parse(res.representation!.dataJson).files as Record<string, { key: string; size: number }>;
    expect(files.original!.size).toBe(body.length);
    const stored = await readMedia(w, files.original!.key);
    expect(stored.info.contentType).toBe('application/octet-stream');
    expect(stored.body.equals(body)).toBe(true);
    // Random bytes are no picture: the job fails with a reason, nothing crashes.
    expect((await waitFinished(w, versionId)).status).toBe('failed');
  }, 120_000);

  it('reads ranges, and refuses unsatisfiable ranges, unknown keys and malformed keys', async () => {
    const versionId = w.records.addVersion();
    await upload(w, versionId, c.still(), { contentType: 'image/png' });
    const done = await waitFinished(w, versionId);
    const whole = await readMedia(w, done.reviewMediaKey!);
    const part = await readMedia(w, done.reviewMediaKey!, [10, 19]);
    expect(part.info).toMatchObject({ rangeStart: 10, rangeEnd: 19, size: whole.body.length, etag: whole.info.etag });
    expect(part.body.equals(whole.body.subarray(10, 20))).toBe(true);
    const open = await readMedia(w, done.reviewMediaKey!, [5, Number.MAX_SAFE_INTEGER]);
    expect(open.info.rangeEnd).toBe(whole.body.length - 1);
    expect(open.body.equals(whole.body.subarray(5))).toBe(true);

    const failure = async (key: string, range?: [number, number]) => {
      try {
        await readMedia(w, key, range);
      } catch (err) {
        return err as AppError;
      }
      throw new Error('read succeeded');
    };
    const past = await failure(done.reviewMediaKey!, [whole.body.length, whole.body.length + 10]);
    expect(past).toMatchObject({ kind: 'bad_request', code: 'range_not_satisfiable', extra: { size: whole.body.length } });
    expect((await failure('rv/0123456789abcdef0123456789abcdef/proxy.mp4')).kind).toBe('not_found');
    for (const bad of [
      '../secret',
      'rv/../../etc/passwd',
      'rv/0123456789abcdef0123456789abcdef/..',
      '/etc/passwd',
      'rv\\x\\y',
      'rv/0123456789ABCDEF0123456789ABCDEF/proxy.mp4',
    ]) {
      expect((await failure(bad)).kind).toBe('bad_request');
    }
  });

  /** How many originals the store holds (its files on disk). */
  const originals = () => readdirSync(w.s3.directory, { recursive: true }).filter((f) => String(f).includes('original')).length;

  it('stores the body while the Version is checked', async () => {
    const versionId = w.records.addVersion();
    const before = originals();
    let release!: () => void;
    w.records.readGate = new Promise<void>((r) => (release = r));
    try {
      const up = upload(w, versionId, c.withAudio(), { contentType: 'video/mp4', declared: true });
      up.catch(() => {});
      // records has not answered the Version check, and the original is already in the store.
      const deadline = Date.now() + 10_000;
      while (originals() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(originals()).toBeGreaterThan(before);
      release();
      w.records.readGate = undefined;
      expect((await up).status).toBe('pending');
      expect((await waitFinished(w, versionId)).status).toBe('done');
    } finally {
      release();
      w.records.readGate = undefined;
    }
  });

  it('answers not_found for an unknown Version, before any upload, and for a Version without reviewable', async () => {
    const before = originals();
    const err = await upload(w, '0190a0a0-0000-7000-8000-000000000000', c.still(), { contentType: 'image/png' }).catch((e: unknown) => e as AppError);
    expect((err as AppError).kind).toBe('not_found');
    // The body is stored while the Version is checked: none of it is left once the Version is not there.
    const big = await upload(w, '0190a0a0-0000-7000-8000-000000000001', c.uhd(), { contentType: 'video/mp4', chunkBytes: 16 * 1024, declared: true }).catch(
      (e: unknown) => e as AppError,
    );
    expect((big as AppError).kind).toBe('not_found');
    expect(originals()).toBe(before);
    const versionId = w.records.addVersion();
    const none = await w.client.call.getReviewable({ versionId }, artist).catch((e: unknown) => e as AppError);
    expect((none as AppError).kind).toBe('not_found');
  });

  it('exposes upload bytes, queue lag, transcode seconds by kind and outcome, and attempts', async () => {
    const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    /** The value of the sample of `name` whose labels include every one of `labels`. */
    const sample = (text: string, name: string, labels: string[] = []) => {
      for (const line of text.split('\n')) {
        const m = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
        if (m && m[1] === name && labels.every((l) => m[2]!.split(',').includes(l))) return Number(m[3]);
      }
      return undefined;
    };
    const api = await scrape(w.api.httpPort!);
    expect(sample(api, 'media_upload_bytes_total')).toBeGreaterThan(10_000);
    expect(sample(api, 'media_uploads_total', ['outcome="stored"'])).toBeGreaterThan(0);
    expect(sample(api, 'media_uploads_total', ['outcome="not_found"'])).toBeGreaterThan(0);
    const worker = await scrape(w.workers[0]!.httpPort!);
    expect(sample(worker, 'media_transcode_queue_lag')).toBeGreaterThanOrEqual(0);
    expect(sample(worker, 'media_transcode_seconds_count', ['step="proxy"', 'kind="video"', 'outcome="ok"'])).toBeGreaterThan(0);
    expect(sample(worker, 'media_transcode_seconds_count', ['step="thumbnail"', 'kind="image"', 'outcome="ok"'])).toBeGreaterThan(0);
    // The wait for the original and the storing of the proxy are timed as steps of their own.
    expect(sample(worker, 'media_transcode_seconds_count', ['step="fetch"', 'outcome="ok"'])).toBeGreaterThan(0);
    expect(sample(worker, 'media_transcode_seconds_count', ['step="store"', 'kind="video"', 'outcome="ok"'])).toBeGreaterThan(0);
    expect(sample(worker, 'media_transcode_attempts_total', ['outcome="done"'])).toBeGreaterThan(0);
  });

  it('refuses an upload over MEDIA_MAX_BYTES as too_large', async () => {
    const versionId = w.records.addVersion();
    const call = w.client.clientStream('uploadReviewable', artist);
    await call.write({
      payload: { $case: 'header', value: { versionId, fileName: 'big.mov', contentType: 'video/quicktime', declaredSize: 64 * 1024 * 1024 * 1024 } },
    });
    const err = await call.end().catch((e: unknown) => e as AppError);
    expect((err as AppError).kind).toBe('too_large');
    expect(w.records.creates.filter((x) => JSON.parse(x.request.dataJson).version?.id === versionId)).toHaveLength(0);
  });
});
