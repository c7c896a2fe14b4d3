/**
 * Originals that name other files (an HLS playlist, an ffconcat list) end `failed` with a
 * reason, having read nothing else: the worker's probe and runs accept only the demuxers of
 * docs/media.md ("ffmpeg, safely"). The store then holds the uploaded originals and nothing made
 * from the local file they point at; the usual videos and stills still end done.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clips, makeClip, startWorld, upload, waitFinished, type World } from './helpers.js';

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('media-transcode: playlists and lists of files', () => {
  let w: World;

  beforeAll(async () => {
    w = await startWorld({ TRANSCODE_MAX_ATTEMPTS: '1' });
    await w.startWorker();
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  it('fails an m3u8 and an ffconcat naming a local video, stores nothing made from it; the usual uploads end done', async () => {
    // The local file a hostile playlist points at: a real, decodable video of a size no test upload has.
    const marker = makeClip(w.ff, w.dir, 'marker.ts', ['-f', 'lavfi', '-i', 'testsrc=size=176x144:rate=25', '-t', '1', '-c:v', 'libx264', '-f', 'mpegts']);
    const m3u8 = join(w.dir, 'list.m3u8');
    writeFileSync(m3u8, `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nfile://${marker}\n#EXT-X-ENDLIST\n`);
    // A relative name: the one kind concat's safe mode lets through (beside the worker's copy).
    const ffconcat = join(w.dir, 'list.ffconcat');
    writeFileSync(ffconcat, 'ffconcat version 1.0\nfile original\nfile marker.ts\n');

    const hostile = [
      { name: 'm3u8', file: m3u8, type: 'video/mp4' },
      { name: 'ffconcat', file: ffconcat, type: 'video/quicktime' },
    ];
    const failed: { name: string; versionId: string }[] = [];
    for (const h of hostile) {
      const versionId = w.records.addVersion();
      expect((await upload(w, versionId, h.file, { contentType: h.type })).status).toBe('pending');
      failed.push({ name: h.name, versionId });
    }
    for (const f of failed) {
      const r = await waitFinished(w, f.versionId, 60_000);
      expect(r.status, f.name).toBe('failed');
      expect(r.transcodeError, f.name).toBe('the file is a playlist or a list of other files, not a video or image; upload the media itself');
      expect(r.reviewMediaKey, f.name).toBeUndefined();
      expect(r.thumbnailMediaKey, f.name).toBeUndefined();
      expect(w.records.records.get(f.versionId)!.thumbnailId, f.name).toBeUndefined();
    }
    // Nothing but the two originals was stored: no proxy or thumbnail, nothing read from the marker.
    const uploaded = [readFileSync(m3u8), readFileSync(ffconcat)];
    const markerBytes = readFileSync(marker);
    const objects = filesUnder(join(w.dir, 's3')).filter((p) => p.endsWith('._S3rver_object'));
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
      const body = readFileSync(o);
      expect(
        uploaded.some((u) => u.equals(body)),
        o,
      ).toBe(true);
      expect(body.includes(markerBytes.subarray(0, 188)), o).toBe(false);
    }

    const c = clips(w.ff, w.dir);
    for (const [file, type] of [
      [c.withAudio(), 'video/mp4'],
      [c.noAudio(), 'video/quicktime'],
      [c.oddSize(), 'video/x-matroska'],
      [c.still(), 'image/png'],
    ] as const) {
      const versionId = w.records.addVersion();
      await upload(w, versionId, file, { contentType: type });
      const r = await waitFinished(w, versionId, 90_000);
      expect(r.status, file).toBe('done');
      expect(r.reviewKind, file).toBe(type === 'image/png' ? 'image' : 'video');
    }
  }, 240_000);
});
