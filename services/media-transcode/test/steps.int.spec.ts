/**
 * How a job's steps overlap (docs/media.md, "Worker"): the proxy encodes beside the thumbnail
 * instead of after it, and a thumbnail that fails still ends the attempt with its own reason,
 * counted as an attempt, with the proxy beside it stopped.
 *
 * ffmpeg is a wrapper script here: it notes when each thumbnail and proxy run starts and ends
 * (epoch ms) in a log, holds a thumbnail run for a while when `thumb-delay` exists, and makes a
 * thumbnail run fail when `thumb-fail` exists; everything else goes to the real ffmpeg.
 */
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureFfmpeg } from '@reelbase/lib-testkit';
import { clips, startWorld, upload, waitFinished, type World } from './helpers.js';

/** One line of the wrapper's log: `start|end thumb|proxy <epoch ms>`. */
function runs(log: string): { event: string; kind: string; at: number }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [event, kind, at] = l.split(' ');
      return { event: event!, kind: kind!, at: Number(at) };
    });
}

describe('media-transcode: the steps of a job', () => {
  let w: World;
  let c: ReturnType<typeof clips>;
  let dir: string;
  let log: string;

  beforeAll(async () => {
    const ff = ensureFfmpeg();
    w = await startWorld();
    dir = w.dir;
    log = join(dir, 'ffmpeg-runs.log');
    const wrapper = join(dir, 'ffmpeg-wrapper.sh');
    writeFileSync(
      wrapper,
      [
        '#!/bin/sh',
        'out=""; for a in "$@"; do out="$a"; done',
        'now() { date +%s%3N; }',
        'case "$out" in',
        `  */thumb.jpg)`,
        `    echo "start thumb $(now)" >> '${log}'`,
        `    if [ -e '${join(dir, 'thumb-fail')}' ]; then echo "Error while decoding stream #0:0" >&2; exit 1; fi`,
        `    if [ -e '${join(dir, 'thumb-delay')}' ]; then sleep 1.5; fi`,
        `    '${ff.ffmpeg}' "$@"; code=$?`,
        `    echo "end thumb $(now)" >> '${log}'`,
        '    exit $code ;;',
        `  */proxy.*)`,
        `    echo "start proxy $(now)" >> '${log}'`,
        `    exec '${ff.ffmpeg}' "$@" ;;`,
        'esac',
        `exec '${ff.ffmpeg}' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(wrapper, 0o755);
    await w.startWorker({ FFMPEG_PATH: wrapper });
    c = clips(w.ff, w.dir);
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  it('encodes the proxy while the thumbnail is made, and still shows the thumbnail before done', async () => {
    rmSync(log, { force: true });
    writeFileSync(join(dir, 'thumb-delay'), '');
    try {
      const versionId = w.records.addVersion();
      await upload(w, versionId, c.withAudio(), { contentType: 'video/mp4' });
      const done = await waitFinished(w, versionId);
      expect(done.status).toBe('done');
      expect(done.attempts).toBe(1);
      const r = runs(log);
      const thumbEnd = r.find((x) => x.event === 'end' && x.kind === 'thumb')!;
      const proxyStart = r.find((x) => x.event === 'start' && x.kind === 'proxy')!;
      expect(thumbEnd).toBeDefined();
      expect(proxyStart).toBeDefined();
      // The thumbnail is held 1.5 s: a proxy that waited for it would start after it ended.
      expect(proxyStart.at).toBeLessThan(thumbEnd.at - 1000);
      // Each state change is one update, in order: the thumbnail is set before done.
      const changes = w.records.updates.filter((u) => u.id === done.representationId).map((u) => u.data);
      const thumbAt = changes.findIndex((d) => d.thumbnail_media_key === done.thumbnailMediaKey);
      const doneAt = changes.findIndex((d) => d.transcode_status === 'done');
      expect(thumbAt).toBeGreaterThanOrEqual(0);
      expect(thumbAt).toBeLessThan(doneAt);
    } finally {
      rmSync(join(dir, 'thumb-delay'), { force: true });
    }
  }, 60_000);

  it('a thumbnail that fails ends the attempt with its reason, counted, and stops the proxy beside it', async () => {
    rmSync(log, { force: true });
    const proxies = async (outcome: string) => {
      const text = await (await fetch(`http://127.0.0.1:${w.workers[0]!.httpPort}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('media_transcode_seconds_count{') && l.includes('step="proxy"') && l.includes(`outcome="${outcome}"`));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const [okBefore, failedBefore] = [await proxies('ok'), await proxies('failed')];
    writeFileSync(join(dir, 'thumb-fail'), '');
    try {
      const versionId = w.records.addVersion();
      await upload(w, versionId, c.withAudio(), { contentType: 'video/mp4' });
      const end = await waitFinished(w, versionId);
      expect(end.status).toBe('failed');
      // Every attempt counted (not taken for a dependency that was down), and the reason is the thumbnail's.
      expect(end.attempts).toBe(2);
      expect(end.transcodeError).toBe('the picture data is damaged and cannot be decoded');
      const r = runs(log);
      expect(r.filter((x) => x.event === 'start' && x.kind === 'thumb')).toHaveLength(2);
      // The proxy was started beside each failing thumbnail and stopped with it (often before its
      // wrapper wrote a line): two failed proxy steps, never an `ok` one.
      expect(await proxies('failed')).toBe(failedBefore + 2);
      expect(await proxies('ok')).toBe(okBefore);
    } finally {
      rmSync(join(dir, 'thumb-fail'), { force: true });
    }
  }, 60_000);
});
