/**
 * Files that must end `failed` with a readable reason after the set attempts, while uploads
 * never fail for them and good jobs queued beside them finish: garbage bytes, a zero-byte file,
 * a truncated MP4, a text file named `.mov`, and a file whose header claims hours of video.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clips, startWorld, upload, waitFinished, type World } from './helpers.js';

describe('media-transcode: files that end failed', () => {
  let w: World;

  beforeAll(async () => {
    // Two attempts (the default), a quick retry, and a 10-minute cap on claimed durations.
    w = await startWorld({ TRANSCODE_MAX_ATTEMPTS: '2', TRANSCODE_MAX_DURATION_S: '600' });
    await w.startWorker();
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  it('fails each bad file with its reason after 2 attempts; the good ones beside them end done', async () => {
    const c = clips(w.ff, w.dir);
    const bad = [
      { name: 'garbage', file: c.garbage(), type: 'video/mp4', reason: /not a video or image|cannot be decoded|no picture/ },
      { name: 'empty', file: c.empty(), type: 'video/quicktime', reason: /empty/ },
      { name: 'truncated', file: c.truncated(), type: 'video/mp4', reason: /incomplete|truncated/ },
      { name: 'text', file: c.text(), type: 'video/quicktime', reason: /not a video or image|cannot be decoded|no picture/ },
      { name: 'claims hours', file: c.claimsHours(), type: 'video/mp4', reason: /claims to last 10 h 0 min, longer than the 10 min/ },
    ];
    const good = [c.withAudio(), c.still()];
    const uploads: { name: string; versionId: string; reason?: RegExp }[] = [];
    // Interleaved: good jobs wait in the queue between bad ones.
    for (const [i, b] of bad.entries()) {
      const versionId = w.records.addVersion();
      const res = await upload(w, versionId, b.file, { contentType: b.type });
      expect(res.status).toBe('pending');
      uploads.push({ name: b.name, versionId, reason: b.reason });
      const g = good[i % good.length]!;
      const gv = w.records.addVersion();
      await upload(w, gv, g, { contentType: g.endsWith('.png') ? 'image/png' : 'video/mp4' });
      uploads.push({ name: `good ${i}`, versionId: gv });
    }
    for (const u of uploads) {
      const r = await waitFinished(w, u.versionId, 90_000);
      if (!u.reason) {
        expect(r.status, u.name).toBe('done');
        continue;
      }
      expect(r.status, u.name).toBe('failed');
      expect(r.transcodeError, u.name).toMatch(u.reason);
      // A sentence, not a dump of ffmpeg's output.
      expect(r.transcodeError!.length, u.name).toBeLessThan(200);
      expect(r.transcodeError, u.name).not.toMatch(/\n|ffmpeg version|Stream #|\[.*@ 0x/);
      expect(r.attempts, u.name).toBe(2);
      const job = await w.api.jobs.latestForVersion(u.versionId);
      const attempts = await w.api.jobs.listAttempts(job!.id);
      expect(
        attempts.map((a) => a.outcome),
        u.name,
      ).toEqual(['retry', 'failed']);
      // The job row is closed before the record says failed.
      expect(job!.state).toBe('failed');
      // The Version keeps no thumbnail from a failed reviewable.
      expect(w.records.records.get(u.versionId)!.thumbnailId, u.name).toBeUndefined();
    }
  }, 240_000);
});
