import { describe, expect, it } from 'vitest';
import type { ProbedSource } from './probe.rules.js';
import { proxyArgs, scaleFilter, thumbnailArgs, thumbnailSeekS } from './transcode.plan.js';

const limits = { threads: 2, maxDurationS: 600 };
const video = (over: Partial<ProbedSource> = {}): ProbedSource => ({ kind: 'video', width: 1920, height: 1080, hasAudio: true, durationS: 10, ...over });
const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe('transcode plan', () => {
  it('allows local files only, bounds threads and never reads stdin', () => {
    for (const args of [
      thumbnailArgs('in', 'out.jpg', video(), limits),
      proxyArgs('in', 'out.mp4', video(), limits),
      proxyArgs('in', 'out.jpg', video({ kind: 'image' }), limits),
    ]) {
      expect(after(args, '-protocol_whitelist')).toBe('file');
      expect(args.indexOf('-protocol_whitelist')).toBeLessThan(args.indexOf('-i'));
      // Only demuxers that open nothing but the file itself: no playlists, lists or sequences.
      const formats = after(args, '-format_whitelist')!.split(',');
      expect(args.indexOf('-format_whitelist')).toBeLessThan(args.indexOf('-i'));
      expect(formats).toEqual(expect.arrayContaining(['mov', 'matroska', 'png_pipe', 'jpeg_pipe', 'exr_pipe', 'dpx_pipe']));
      for (const nesting of ['hls', 'dash', 'concat', 'ffmetadata', 'image2', 'svg_pipe', 'tty', 'lavfi']) expect(formats).not.toContain(nesting);
      expect(after(args, '-threads')).toBe('2');
      expect(args).toContain('-nostdin');
      // The decoder (before the input), the filter graph and the encoder (an output option after
      // the last input): an unbounded libx264 takes 1.5 threads per core it can see.
      const threadsAt = args.flatMap((a, i) => (a === '-threads' ? [i] : []));
      expect(threadsAt).toHaveLength(2);
      expect(threadsAt[0]).toBeLessThan(args.indexOf('-i'));
      expect(threadsAt[1]).toBeGreaterThan(args.lastIndexOf('-i'));
      expect(args[threadsAt[1]! + 1]).toBe(args.includes('libx264') ? '3' : '2');
      expect(after(args, '-filter_threads')).toBe('2');
    }
  });

  it('makes an H.264/AAC yuv420p faststart MP4 capped in width and duration', () => {
    const args = proxyArgs('in', 'out.mp4', video(), limits);
    expect(after(args, '-c:v')).toBe('libx264');
    expect(after(args, '-pix_fmt')).toBe('yuv420p');
    expect(after(args, '-c:a')).toBe('aac');
    expect(after(args, '-movflags')).toBe('+faststart');
    expect(after(args, '-t')).toBe('600');
    expect(after(args, '-vf')).toBe(scaleFilter(1920));
    expect(after(args, '-map')).toBe('0:v:0');
    expect(args).not.toContain('lavfi');
  });

  it('adds a silent stereo track when the source has no sound, stopped with the picture', () => {
    const args = proxyArgs('in', 'out.mp4', video({ hasAudio: false }), limits);
    expect(after(args, '-f')).toBe('lavfi');
    expect(args.join(' ')).toContain('anullsrc=channel_layout=stereo:sample_rate=48000 -map 0:v:0 -map 1:a:0');
    expect(args).toContain('-shortest');
  });

  it('scales down only, to even sides', () => {
    expect(scaleFilter(1920)).toBe("scale=w='min(1920,trunc(iw/2)*2)':h=-2:flags=bicubic,setsar=1");
  });

  it('takes the thumbnail a second in, or at the start of a short clip or an image', () => {
    expect(thumbnailSeekS(video())).toBe(1);
    expect(thumbnailSeekS(video({ durationS: 1.5 }))).toBe(0);
    expect(thumbnailSeekS(video({ kind: 'image', durationS: 0 }))).toBe(0);
    expect(after(thumbnailArgs('in', 'out.jpg', video(), limits), '-ss')).toBe('1.000');
    expect(thumbnailArgs('in', 'out.jpg', video({ durationS: 1 }), limits)).not.toContain('-ss');
  });

  it('reads at real-time speed only when asked (a test fault)', () => {
    expect(proxyArgs('in', 'o.mp4', video(), limits)).not.toContain('-re');
    expect(proxyArgs('in', 'o.mp4', video(), limits, { realtime: true })).toContain('-re');
  });
});
